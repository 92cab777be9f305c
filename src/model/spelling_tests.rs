use super::closest;

#[test]
fn finds_the_name_meant() {
    let todo = ["userId", "title", "completed"];
    assert_eq!(closest("userid", &todo), Some("userId"));
    assert_eq!(closest("USERID", &todo), Some("userId"));
    assert_eq!(closest("titel", &todo), Some("title"));
    assert_eq!(closest("user_id", &todo), Some("userId"));
    assert_eq!(closest("complete", &todo), Some("completed"));
    assert_eq!(closest("colour", &todo), None);
    assert_eq!(closest("x", &["q", "id"]), None);
    assert_eq!(closest("_sortt", &["_sort", "_start"]), Some("_sort"));
}
