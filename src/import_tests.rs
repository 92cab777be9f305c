use super::*;

#[test]
fn the_top_level_is_read_member_by_member_and_a_name_given_twice_is_refused() {
    let db = read(br#"{"posts": [1, 2], "todos": [], "profile": {"a": 1}, "n": 5}"#);
    let Ok(db) = db else {
        panic!("not read");
    };
    assert_eq!(db.todos.map(RawValue::get), Some("[]"));
    assert!(db.widgets.is_none());
    let shapes: Vec<String> = db
        .others
        .iter()
        .map(|(name, value)| format!("{name} ({})", shape(value)))
        .collect();
    assert_eq!(
        shapes,
        [
            "posts (2 items)",
            "profile (an object)",
            "n (a single value)"
        ]
    );

    let twice = read(b"{\"todos\": [],\n \"posts\": [], \"todos\": []}").err();
    assert!(twice.is_some_and(|why| why.starts_with(
        ": \"todos\" is given more than once (the second at line 2): JSON leaves open"
    )));
    let not_an_object = read(b"[1, 2]").err();
    assert!(not_an_object.is_some_and(|why| why.contains("should be an object")));
    let cut_short = read(b"{\"todos\": [").err();
    assert!(cut_short.is_some_and(|why| why.starts_with(" is not valid JSON")));
}
