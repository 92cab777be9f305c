//! The validator's rules, field by field, and the inline text of items.

use super::*;

fn validator(json: &str, known: &[&str]) -> Validator {
    let Members(fields) = serde_json::from_str(json).unwrap();
    Validator::new("todo", fields, known)
}

fn fields_in_error(v: Validator) -> Vec<String> {
    match v.finish() {
        Err(ApiError::Invalid { errors, .. }) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected 422, got {other:?}"),
    }
}

#[test]
fn collects_every_error() {
    let mut v = validator(
        r#"{"title": "", "extra": 1, "id": 3, "done": 2}"#,
        &["title", "userId"],
    );
    assert_eq!(v.string("title", 10, Need::Required), None);
    assert_eq!(v.integer("userId", Need::Required), None);
    assert_eq!(
        fields_in_error(v),
        ["extra", "id", "done", "title", "userId"]
    );
}

#[test]
fn duplicates_are_reported_once_and_not_as_missing() {
    let mut v = validator(r#"{"title": "a", "title": "b", "title": "c"}"#, &["title"]);
    assert_eq!(v.string("title", 10, Need::Required), None);
    assert_eq!(fields_in_error(v), ["title"]);
}

#[test]
fn strings() {
    let mut v = validator(
        r#"{"a": " x ", "b": "   ", "c": null, "d": 5, "e": "ééé"}"#,
        &["a", "b", "c", "d", "e"],
    );
    assert_eq!(v.string("a", 3, Need::Required).as_deref(), Some(" x "));
    assert_eq!(v.string("b", 3, Need::Required), None);
    assert_eq!(v.string("c", 3, Need::Required), None);
    assert_eq!(v.string("d", 3, Need::Required), None);
    assert_eq!(v.string("e", 3, Need::Required).as_deref(), Some("ééé"));
    assert_eq!(fields_in_error(v), ["b", "c", "d"]);
}

#[test]
fn integers_and_booleans() {
    let mut v = validator(
        r#"{"a": 1, "b": 9007199254740991, "c": 9007199254740992, "d": 0, "e": 1.0,
            "f": "1", "g": -1, "h": true, "i": "true", "j": 1.5, "k": 9007199254740991.0,
            "l": 2e3, "m": 99999999999999999999, "n": -0, "o": 9007199254740991.4,
            "p": 700e-2, "q": 0.5e1}"#,
        &[
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q",
        ],
    );
    // A number that names an integer is that integer, read from its
    // text: `k` is 2^53-1 exactly, though its f64 is one off.
    for (name, n) in [
        ("a", 1),
        ("b", MAX_SAFE_INTEGER),
        ("e", 1),
        ("k", MAX_SAFE_INTEGER),
        ("l", 2000),
        ("p", 7),
        ("q", 5),
    ] {
        assert_eq!(v.integer(name, Need::Required), Some(n), "{name}");
    }
    for name in ["c", "d", "f", "g", "j", "m", "n", "o"] {
        assert_eq!(v.integer(name, Need::Required), None, "{name}");
    }
    assert_eq!(v.boolean("h", Need::Required), Some(true));
    assert_eq!(v.boolean("i", Need::Required), None);
    let errors = match v.finish() {
        Err(ApiError::Invalid { errors, .. }) => errors,
        other => panic!("expected 422, got {other:?}"),
    };
    let message = |field: &str| {
        let error = errors.iter().find(|e| e.field == field);
        error.map_or("", |e| e.message.as_str())
    };
    assert_eq!(
        message("o"),
        "must be an integer from 1 to 9007199254740991"
    );
    let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["c", "d", "f", "g", "j", "m", "n", "o", "i"]);
}

#[test]
fn exact_integers_from_number_text() {
    for (text, n) in [
        ("0", Some(0)),
        ("7", Some(7)),
        ("7.000", Some(7)),
        ("7e0", Some(7)),
        ("7E+2", Some(700)),
        ("0.07e2", Some(7)),
        ("700e-2", Some(7)),
        ("18446744073709551615", Some(u64::MAX)),
        ("18446744073709551616", None),
        ("1e20", None),
        ("7.5", None),
        ("75e-1", None),
        ("-7", None),
        ("1e999999999999999999999", None),
    ] {
        assert_eq!(exact_integer(text), n, "{text}");
    }
}

#[test]
fn form_text_is_converted() {
    let text = |name: &str, value: &str| (name.to_string(), Input::Text(value.into()));
    let fields = vec![
        text("n", "12"),
        text("b", "false"),
        text("z", "012"),
        text("y", "yes"),
    ];
    let mut v = Validator::new("todo", fields, &["n", "b", "z", "y"]);
    assert_eq!(v.integer("n", Need::Required), Some(12));
    assert_eq!(v.boolean("b", Need::Required), Some(false));
    assert_eq!(v.integer("z", Need::Required), None);
    assert_eq!(v.boolean("y", Need::Required), None);
    assert_eq!(fields_in_error(v), ["z", "y"]);
}

#[test]
fn decimal_ids() {
    assert_eq!(parse_decimal("1"), Some(1));
    assert_eq!(parse_decimal("120"), Some(120));
    for bad in [
        "",
        "0",
        "007",
        "-1",
        "+1",
        "1.5",
        "abc",
        " 1",
        "99999999999999999999999",
    ] {
        let parsed = parse_decimal(bad).filter(|&n| n > 0);
        assert_eq!(parsed, None, "{bad:?}");
    }
}

#[test]
fn text_is_inline_up_to_the_limit() {
    let short = "é".repeat(INLINE / 2);
    let long = "x".repeat(INLINE + 1);
    assert!(matches!(Str::from(short.clone()), Str::Inline(..)));
    assert!(matches!(Str::from(long.clone()), Str::Heap(_)));
    for text in [String::new(), "Buy milk".into(), short, long] {
        let kept = Str::from(text.clone());
        assert_eq!(&*kept, text);
        assert_eq!(
            serde_json::to_string(&kept).unwrap(),
            serde_json::to_string(&text).unwrap()
        );
    }
    assert_eq!(std::mem::size_of::<Str>(), 32);
}

#[test]
fn duplicate_members_are_kept_in_order() {
    let Members(fields) = serde_json::from_str(r#"{"b": 1, "a": "x", "b": true}"#).unwrap();
    let names: Vec<_> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "a", "b"]);
}
