use super::{Condition, read};

#[test]
fn reads_star_and_lists_of_entity_tags() {
    let check = |value: &str, expected: Option<Condition<'_>>| {
        assert_eq!(read(value), expected, "{value:?}");
    };
    check("*", Some(Condition::Any));
    check(" * ", Some(Condition::Any));
    check(r#""a""#, Some(Condition::Tags(vec![r#""a""#])));
    check(r#""""#, Some(Condition::Tags(vec![r#""""#])));
    check(
        r#"W/"a", "b,c" ,"d""#,
        Some(Condition::Tags(vec![r#"W/"a""#, r#""b,c""#, r#""d""#])),
    );
    // Empty elements are skipped (RFC 9110 section 5.6.1.2).
    check(
        r#", "a",, "b","#,
        Some(Condition::Tags(vec![r#""a""#, r#""b""#])),
    );
    for malformed in [
        "",
        " ",
        ",",
        " , ,",
        "abc",
        r#"""#,
        r#""a"#,
        r#"a""#,
        r#""a" "b""#,
        r#""a"b"#,
        r#"w/"a""#,
        r#"W/ "a""#,
        r#""a b""#,
        "\"a\tb\"",
        r#"*, "a""#,
        "**",
        r#""a"; "b""#,
    ] {
        check(malformed, None);
    }
}

#[test]
fn strong_and_weak_comparison() {
    // The four cases of RFC 9110 section 8.8.3.2's table.
    let tags = |value| read(value).unwrap_or(Condition::Tags(vec![]));
    let (strong, weak) = (tags(r#""1""#), tags(r#"W/"1""#));
    assert!(!weak.matches_strong(r#"W/"1""#) && weak.matches_weak(r#"W/"1""#));
    assert!(!weak.matches_strong(r#"W/"2""#) && !weak.matches_weak(r#"W/"2""#));
    assert!(!weak.matches_strong(r#""1""#) && weak.matches_weak(r#""1""#));
    assert!(strong.matches_strong(r#""1""#) && strong.matches_weak(r#""1""#));
    assert!(Condition::Any.matches_strong(r#""9""#));
    assert!(Condition::Any.matches_weak(r#""9""#));
    assert!(tags(r#""0", "1""#).matches_strong(r#""1""#));
}

#[test]
fn a_malformed_value_is_400_naming_the_field() {
    let Err(error) = Condition::parse("If-Match", "abc") else {
        panic!("abc is no entity tag");
    };
    assert_eq!(error.status(), 400);
    assert!(error.to_string().contains("If-Match: 'abc'"), "{error}");
}
