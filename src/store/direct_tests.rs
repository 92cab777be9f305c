use super::*;
use crate::model::Members;

/// The general way: the rules of a create, as `load.rs` applies them.
fn general<T: Resource>(json: &str) -> Option<T> {
    let Members(fields) = serde_json::from_str(json).ok()?;
    super::super::load::from_stored(fields).ok()
}

/// Every case either goes the general way (`None`) or loads exactly
/// as the general way loads it; `plain` says which is expected.
fn check<T: Direct + PartialEq + std::fmt::Debug>(cases: &[(&str, bool)]) {
    for (json, plain) in cases {
        let direct = T::direct(json);
        assert_eq!(direct.is_some(), *plain, "{json}");
        if direct.is_some() {
            assert_eq!(direct, general::<T>(json), "{json}");
        }
    }
}

#[test]
fn the_fast_way_loads_what_the_general_way_loads_or_hands_it_over() {
    let long = "x".repeat(MAX_TITLE);
    let too_long = "é".repeat(MAX_TITLE + 1);
    let at_most = format!(r#"{{"id": 3, "userId": 1, "title": "{long}"}}"#);
    let over = format!(r#"{{"id": 3, "userId": 1, "title": "{too_long}"}}"#);
    check::<Todo>(&[
        (
            r#"{"id": 1, "userId": 2, "title": "a", "completed": true}"#,
            true,
        ),
        (
            r#"{"completed": false, "title": "b\u00e9\n", "userId": 9, "id": 2}"#,
            true,
        ),
        (
            r#"{"id": 9007199254740991, "userId": 9007199254740991, "title": "a"}"#,
            true,
        ),
        (at_most.as_str(), true),
        (over.as_str(), false),
        (
            r#"{"id": 9007199254740992, "userId": 1, "title": "a"}"#,
            false,
        ),
        (r#"{"id": 0, "userId": 1, "title": "a"}"#, false),
        (r#"{"id": 1, "userId": 0, "title": "a"}"#, false),
        (r#"{"id": 1, "userId": 7e0, "title": "a"}"#, false),
        (r#"{"id": 1.0, "userId": 7, "title": "a"}"#, false),
        (r#"{"id": 1, "userId": 1, "title": " \t "}"#, false),
        (r#"{"id": 1, "userId": 1, "title": ""}"#, false),
        (
            r#"{"id": 1, "userId": 1, "title": "a", "completed": null}"#,
            false,
        ),
        (
            r#"{"id": 1, "userId": 1, "title": "a", "title": "b"}"#,
            false,
        ),
        (
            r#"{"id": 1, "userId": 1, "title": "a", "done": true}"#,
            false,
        ),
        (r#"{"id": 1, "title": "a"}"#, false),
        (r#"{"id": -1, "userId": 1, "title": "a"}"#, false),
        (r#"[1, 1, "a"]"#, false),
    ]);
    check::<Widget>(&[
        (r#"{"id": 1, "price": "$10", "quality": "good"}"#, true),
        (r#"{"id": 1, "price": "$10"}"#, false),
        (r#"{"id": 1, "price": "", "quality": "good"}"#, false),
        (r#"{"id": 1, "price": 10, "quality": "good"}"#, false),
    ]);
    // Cases the general way takes that the direct read hands over.
    assert!(general::<Todo>(r#"{"id": 1, "userId": 7e0, "title": "a"}"#).is_some());
    assert!(general::<Todo>(r#"{"id": 1.0, "userId": 7, "title": "a"}"#).is_some());
}
