use super::*;
use crate::model::{Todo, Widget};

fn import<T: Resource>(json: &str) -> (Vec<T>, String) {
    let Ok(raw) = serde_json::from_str::<&RawValue>(json) else {
        panic!("not JSON: {json}");
    };
    let Ok(Imported { items, lines }) = collection::<T>(raw) else {
        panic!("not read: {json}");
    };
    (items, lines.join("\n"))
}

#[test]
fn widgets_convert_numbers_to_text_and_repeated_ids_get_new_ones() {
    let (widgets, report) = import::<Widget>(
        r#"[{"id": 2, "price": 10, "quality": "good"},
            {"id": 2, "price": "$5", "quality": "fine"},
            {"id": 7.0, "price": "$1", "quality": "ok", "color": "red", "color": "blue"},
            {"price": "$3", "quality": "ok"},
            "a widget"]"#,
    );
    let ids: Vec<(u64, &str)> = widgets.iter().map(|w| (w.id, &*w.price)).collect();
    assert_eq!(ids, [(2, "10"), (7, "$1"), (8, "$5"), (9, "$3")]);
    for line in [
        "widgets: kept 4 of 5 items",
        "id: gave new ids 8 to 9 to 2 items whose id is not a positive integer or repeats one (2, none)",
        "price: converted 1 value from a number to text (10)",
        "color: left out of 1 item: not a field of a widget (its fields: price, quality)",
        "left out 1 item: not an object: widgets[4]",
    ] {
        assert!(report.contains(line), "{line}:\n{report}");
    }
}

#[test]
fn a_boolean_that_is_not_one_is_left_out_and_values_are_never_guessed() {
    let (todos, report) = import::<Todo>(
        r#"[{"id": "01", "userId": "2", "title": "a", "completed": "yes"},
            {"id": 2, "userId": "two", "title": "b"},
            {"id": 3, "userId": 1, "title": ""},
            {"id": "9007199254740992", "userId": 1, "title": "c"},
            {"id": 4, "userId": 1, "title": "d\ud800"}]"#,
    );
    let kept: Vec<(u64, u64, bool)> = todos
        .iter()
        .map(|t| (t.id, t.user_id, t.completed))
        .collect();
    assert_eq!(kept, [(1, 2, false), (2, 1, false)]);
    for line in [
        r#"completed: 1 value is neither true nor false ("yes"): left out, so that todo has completed false"#,
        "left out 1 item: userId must be an integer from 1 to 9007199254740991: todos[1] (id 2)",
        "left out 1 item: title must be 1 to 1000 characters long: todos[2] (id 3)",
        r#"id: gave the new id 2 to 1 item whose id is not a positive integer or repeats one ("9007199254740992")"#,
        "left out 1 item: not valid JSON: unexpected end of hex escape: todos[4]",
    ] {
        assert!(report.contains(line), "{line}:\n{report}");
    }
}

#[test]
fn new_ids_end_at_2_to_the_53_minus_1_and_the_items_past_it_are_left_out() {
    let (todos, report) = import::<Todo>(
        r#"[{"id": 9007199254740990, "userId": 1, "title": "a"},
            {"userId": 1, "title": "b"},
            {"id": "x", "userId": 1, "title": "c"}]"#,
    );
    let ids: Vec<u64> = todos.iter().map(|t| t.id).collect();
    assert_eq!(ids, [9007199254740990, 9007199254740991]);
    for line in [
        "todos: kept 2 of 3 items",
        "id: gave the new id 9007199254740991 to 1 item",
        r#"left out 1 item: needs a new id, and none is left after 9007199254740991 (the largest integer a JSON client holds exactly): todos[2] (id "x")"#,
        "id: 9007199254740991, the highest, is the last there is",
    ] {
        assert!(report.contains(line), "{line}:\n{report}");
    }
}

#[test]
fn a_collection_that_is_not_an_array_is_said() {
    let (todos, report) = import::<Todo>(r#"{"1": {}}"#);
    assert!(todos.is_empty());
    assert_eq!(report, "todos: left out: not an array of items");
}

#[test]
fn the_places_of_items_left_out_are_quoted_up_to_three() {
    let (_, report) = import::<Todo>(r#"[1, 2, 3, 4, 5]"#);
    assert!(
        report
            .contains("left out 5 items: not an object: todos[0], todos[1], todos[2], and 2 more"),
        "{report}"
    );
}
