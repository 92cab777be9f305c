use super::{Return, return_preference};

#[test]
fn the_first_return_preference_counts() {
    let minimal = Some(Return::Minimal);
    let representation = Some(Return::Representation);
    for (value, expected) in [
        ("return=minimal", minimal),
        ("RETURN = Minimal", minimal),
        ("return=\"minimal\"", minimal),
        ("respond-async, return=minimal; foo=bar, wait=10", minimal),
        ("foo=\"a,return=representation\", return=minimal", minimal),
        ("return=representation", representation),
        ("return=representation, return=minimal", representation),
        // Another value, a malformed field, none at all: no preference.
        ("return=nothing, return=minimal", None),
        ("return", None),
        ("", None),
        (",,;=\"", None),
        ("handling=lenient", None),
        ("returns=minimal", None),
    ] {
        assert_eq!(return_preference(Some(value)), expected, "{value}");
    }
    assert_eq!(return_preference(None), None);
}
