//! The list query language over a small collection of things.

use super::*;
use crate::model::Field;

#[derive(Debug, PartialEq)]
struct Thing {
    id: u64,
    n: u64,
    name: &'static str,
    on: bool,
}

impl Queryable for Thing {
    const FIELDS: &'static [Field<Thing>] = &[
        Field::Integer("id", |thing| thing.id),
        Field::Integer("n", |thing| thing.n),
        Field::Text("name", |thing| thing.name),
        Field::Boolean("on", |thing| thing.on),
    ];
}

fn things() -> Vec<Thing> {
    [
        (1, 3, "Milk", false),
        (2, 1, "bread", true),
        (3, 2, "milkshake", true),
        (4, 1, "Eggs", false),
        (5, 2, "Ümlaut", true),
    ]
    .into_iter()
    .map(|(id, n, name, on)| Thing { id, n, name, on })
    .collect()
}

/// The query's pairs, decoded as `http::query_pairs` does for valid text.
fn pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

fn ids(query: &str) -> (Vec<u64>, usize) {
    let items = things();
    let parsed = parse::<Thing>(&pairs(query)).unwrap_or_else(|e| panic!("{query}: {e}"));
    let (page, total) = parsed.run(items.iter(), items.len());
    (page.iter().map(|t| t.id).collect(), total)
}

fn error(query: &str) -> String {
    parse::<Thing>(&pairs(query)).expect_err(query).to_string()
}

#[test]
fn filters_and_operators() {
    assert_eq!(ids("n=1"), (vec![2, 4], 2));
    assert_eq!(ids("id=1&id=3"), (vec![1, 3], 2));
    assert_eq!(ids("n=2&on=true"), (vec![3, 5], 2));
    assert_eq!(ids("n_ne=1&n_ne=2"), (vec![1], 1));
    assert_eq!(ids("n_gte=2&id_lte=3"), (vec![1, 3], 2));
    assert_eq!(ids("name_like=MILK"), (vec![1, 3], 2));
    assert_eq!(ids("name_like=ümL"), (vec![5], 1));
    assert_eq!(ids("q=e"), (vec![2, 3, 4], 3));
    assert_eq!(ids("name=bread"), (vec![2], 1));
    assert_eq!(ids("name_gte=a"), (vec![2, 3, 5], 3));
    assert_eq!(ids(""), (vec![1, 2, 3, 4, 5], 5));
}

#[test]
fn sort_with_ties_by_id() {
    assert_eq!(ids("_sort=n").0, [2, 4, 3, 5, 1]);
    assert_eq!(ids("_sort=n&_order=desc").0, [1, 3, 5, 2, 4]);
    assert_eq!(ids("_sort=on,n&_order=desc,asc").0, [2, 3, 5, 4, 1]);
    assert_eq!(ids("_sort=name").0, [4, 1, 2, 3, 5]);
}

#[test]
fn slices() {
    assert_eq!(ids("_page=2&_limit=2"), (vec![3, 4], 5));
    assert_eq!(ids("_page=3&_limit=2"), (vec![5], 5));
    assert_eq!(ids("_page=4&_limit=2"), (vec![], 5));
    assert_eq!(ids("_page=1"), (vec![1, 2, 3, 4, 5], 5));
    assert_eq!(ids("_start=1&_end=3"), (vec![2, 3], 5));
    assert_eq!(ids("_start=3&_limit=10"), (vec![4, 5], 5));
    assert_eq!(ids("_limit=2"), (vec![1, 2], 5));
    assert_eq!(ids("_limit=0"), (vec![], 5));
    assert_eq!(ids("_end=2"), (vec![1, 2], 5));
    assert_eq!(ids("_start=9"), (vec![], 5));
    // Combined as json-server combines them: `_page` first, then `_end`.
    assert_eq!(ids("_page=2&_limit=2&_start=0&_end=1"), (vec![3, 4], 5));
    assert_eq!(ids("_start=1&_end=3&_limit=1"), (vec![2, 3], 5));
    // Filters, then sort, then slice; the total counts the matches.
    assert_eq!(ids("on=true&_sort=n&_order=desc&_limit=2"), (vec![3, 5], 3));
    assert_eq!(ids("n_gte=1&_page=2&_limit=1&_sort=name"), (vec![1], 5));
}

#[test]
fn errors_name_the_parameter() {
    assert!(error("nme=x").contains("'nme'") && error("nme=x").contains("valid parameters"));
    assert!(error("n=01").contains("'n'"));
    assert!(error("n=-1").contains("'n'"));
    assert!(error("on=yes").contains("'on'"));
    assert!(error("on_gte=true").contains("'on_gte'"));
    assert!(error("n_like=1").contains("'n_like'"));
    assert!(error("name_foo=1").contains("'name_foo'"));
    assert!(error("_page=0").contains("'_page'"));
    assert!(error("_limit=-1").contains("'_limit'"));
    assert!(error("_limit=ten").contains("'_limit'"));
    assert!(error("_page=1&_limit=0").contains("'_limit'"));
    assert!(error("_start=3&_end=2").contains("'_end'"));
    assert!(error("_sort=nope").contains("'_sort'"));
    assert!(error("_sort=n&_order=up").contains("'_order'"));
    assert!(error("_order=asc").contains("'_order'"));
    assert!(error("_sort=n&_order=asc,desc").contains("'_order'"));
    assert!(error("_page=1&_page=2").contains("more than once"));
    assert!(error("q=a&q=b").contains("more than once"));
    assert!(error("_sort=n&_sort=id").contains("more than once"));
}

#[test]
fn link_header_for_pages() {
    let link = |query: &str, total| {
        parse::<Thing>(&pairs(query))
            .unwrap()
            .link("/api/things", total)
    };
    assert_eq!(link("_limit=2", 5), None);
    assert_eq!(
        link("on=true&_page=2&_limit=2", 5).unwrap(),
        "</api/things?on=true&_page=1&_limit=2>; rel=\"first\", \
         </api/things?on=true&_page=1&_limit=2>; rel=\"prev\", \
         </api/things?on=true&_page=3&_limit=2>; rel=\"next\", \
         </api/things?on=true&_page=3&_limit=2>; rel=\"last\""
    );
    assert_eq!(
        link("_page=1", 0).unwrap(),
        "</api/things?_page=1&_limit=10>; rel=\"first\", </api/things?_page=1&_limit=10>; rel=\"last\""
    );
    let beyond = link("_page=9&_limit=2", 5).unwrap();
    assert!(
        beyond.contains("_page=3&_limit=2>; rel=\"prev\""),
        "{beyond}"
    );
    assert!(!beyond.contains("next"), "{beyond}");
}

#[test]
fn repeated_operators_combine_as_in_json_server() {
    // Any of the values, but none of those of _ne.
    assert_eq!(ids("name_like=^m&name_like=^b").0, [1, 2, 3]);
    assert_eq!(ids("n_gte=3&n_gte=2").0, [1, 3, 5]);
    assert_eq!(ids("n_lte=1&n_lte=2").0, [2, 3, 4, 5]);
    assert_eq!(ids("id_gte=5&id_lte=1&id_lte=2").0, [5][..0]);
    assert_eq!(ids("n=1&n=3").0, [1, 2, 4]);
    assert_eq!(ids("n_ne=1&n_ne=3").0, [3, 5]);
    assert_eq!(ids("on=true&on=false").0, [1, 2, 3, 4, 5]);
    // Distinct parameters must all hold.
    assert_eq!(ids("id_gte=2&id_lte=4&name_like=k").0, [3]);
}

#[test]
fn like_is_a_regular_expression_ignoring_case() {
    assert_eq!(ids("name_like=^MI").0, [1, 3]);
    assert_eq!(ids("name_like=k$").0, [1]);
    assert_eq!(ids("name_like=m.*k").0, [1, 3]);
    assert_eq!(ids("name_like=^(eggs|bread)$").0, [2, 4]);
    assert_eq!(ids("name_like=[ü]ml").0, [5]);
    assert_eq!(ids("name_like=^Ü").0, [5]);
    assert_eq!(ids("name_like=").0, [1, 2, 3, 4, 5]);
    // Text with no special character is the same text as a pattern.
    assert_eq!(ids("name_like=ÜML").0, [5]);
    assert_eq!(ids("name_like=milk").0, [1, 3]);
}

#[test]
fn a_like_pattern_that_does_not_compile_is_400_saying_why() {
    for (query, why) in [
        ("name_like=(milk", "'(milk' is not a regular expression"),
        ("name_like=[a-", "'[a-' is not a regular expression"),
        ("name_like=a{1000}{1000}", "too large once compiled"),
        ("name_like=x{5000}", "too large once compiled"),
        ("name_like=(?=a)", "'(?=a)' is not a regular expression"),
    ] {
        let refused = error(query);
        assert!(refused.contains("'name_like'"), "{query}: {refused}");
        assert!(refused.contains(why), "{query}: {refused}");
    }
    let longest = "a".repeat(MAX_PATTERN);
    assert_eq!(ids(&format!("name_like={longest}")).0, [5][..0]);
    let too_long = error(&format!("name_like={longest}a"));
    assert!(too_long.contains("at most 100 characters"), "{too_long}");
    let half = "a".repeat(MAX_PATTERN / 2);
    let together = error(&format!("name_like={half}&name_like={half}&name_like=b"));
    assert!(together.contains("at most 100 characters"), "{together}");
}

#[test]
fn the_array_form_of_axios_and_qs_is_a_repeated_name() {
    for (arrays, repeated) in [
        ("id[]=1&id[]=3", "id=1&id=3"),
        ("id%5B%5D=1&id%5B%5D=3", "id=1&id=3"),
        ("id[0]=1&id[1]=3", "id=1&id=3"),
        ("id[]=1&id=3", "id=1&id=3"),
        ("name_like[]=^m&name_like[]=gg", "name_like=^m&name_like=gg"),
        ("n_ne[]=1", "n_ne=1"),
        ("q[]=e", "q=e"),
        ("_sort[]=n&_limit[]=2", "_sort=n&_limit=2"),
    ] {
        assert_eq!(ids(arrays), ids(repeated), "{arrays}");
    }
    for (query, name) in [("id[x]=1", "id[x]"), ("[]=1", "[]"), ("nope[]=1", "nope[]")] {
        assert!(error(query).contains(&format!("'{name}'")), "{query}");
    }
}

#[test]
fn many_values_are_looked_up_not_compared_one_by_one() {
    let many: Vec<String> = (1..=30_000).map(|n| format!("id={n}")).collect();
    let query = parse::<Thing>(&pairs(&many.join("&"))).unwrap();
    let filter = &query.filters[0];
    assert_eq!(query.filters.len(), 1);
    assert!(filter.holds(FieldValue::Integer(30_000)));
    assert!(!filter.holds(FieldValue::Integer(30_001)));
    let text = format!(
        "{{\"id\":[{}]}}",
        (1..=30_000)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(ids(&dialect(&[("filter", &text)])), ids(""));
}

/// A query in the simple-rest dialect, its JSON values percent-encoded as
/// the provider sends them.
fn dialect(params: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    query.finish()
}

#[test]
fn the_simple_rest_dialect_says_what_json_servers_parameters_say() {
    let same = |ours: &[(&str, &str)], theirs: &str| {
        assert_eq!(ids(&dialect(ours)), ids(theirs), "{ours:?} vs {theirs}");
    };
    same(&[("sort", r#"["n","DESC"]"#)], "_sort=n&_order=desc");
    same(&[("sort", r#"["name","asc"]"#)], "_sort=name");
    same(&[("range", "[1,2]")], "_start=1&_end=3");
    same(&[("range", "[0,0]")], "_start=0&_end=1");
    same(&[("range", "[3,99]")], "_start=3");
    same(&[("range", "[9,10]")], "_start=9&_end=11");
    same(&[("range", "[0,18446744073709551615]")], "");
    same(&[("filter", "{}")], "");
    same(&[("filter", r#"{"n":1}"#)], "n=1");
    same(&[("filter", r#"{"id":[1,3]}"#)], "id=1&id=3");
    same(
        &[("filter", r#"{"on":true,"n_gte":"2"}"#)],
        "on=true&n_gte=2",
    );
    same(&[("filter", r#"{"q":"E"}"#)], "q=e");
    same(&[("filter", r#"{"name_like":"milk"}"#)], "name_like=milk");
    // Distinct parameters must all hold: the filter's and the query's.
    same(&[("filter", r#"{"n":[1,2]}"#), ("n", "2")], "n=2");
    same(&[("filter", r#"{"n":1}"#), ("n", "2")], "n=1&n_ne=1");
    same(
        &[
            ("sort", r#"["n","ASC"]"#),
            ("range", "[1,2]"),
            ("filter", r#"{"on":true}"#),
        ],
        "on=true&_sort=n&_start=1&_end=3",
    );
    // An empty array is any of nothing: no match.
    assert_eq!(ids(&dialect(&[("filter", r#"{"id":[]}"#)])), (vec![], 0));
    let none = dialect(&[("id", "1"), ("filter", r#"{"id":[]}"#)]);
    assert_eq!(ids(&none), (vec![], 0));
}

#[test]
fn content_range_only_for_the_dialect() {
    let range = |params: &[(&str, &str)], total| {
        let query = parse::<Thing>(&pairs(&dialect(params))).unwrap();
        query.content_range("things", total)
    };
    assert_eq!(
        range(&[("range", "[0,9]")], 5).as_deref(),
        Some("things 0-4/5")
    );
    assert_eq!(
        range(&[("range", "[2,3]")], 5).as_deref(),
        Some("things 2-3/5")
    );
    assert_eq!(
        range(&[("range", "[5,9]")], 5).as_deref(),
        Some("things */5")
    );
    assert_eq!(
        range(&[("range", "[0,9]")], 0).as_deref(),
        Some("things */0")
    );
    assert_eq!(
        range(&[("filter", "{}")], 3).as_deref(),
        Some("things 0-2/3")
    );
    assert_eq!(
        range(&[("sort", r#"["id","ASC"]"#)], 1).as_deref(),
        Some("things 0-0/1")
    );
    assert_eq!(range(&[("_start", "0")], 5), None);
    assert_eq!(range(&[], 5), None);
}

#[test]
fn dialect_errors_name_the_parameter_and_say_how() {
    let refused = |params: &[(&str, &str)]| match parse::<Thing>(&pairs(&dialect(params))) {
        Err(ApiError::BadRequest { detail, hint }) => (detail, hint.unwrap_or_default()),
        other => panic!("{params:?}: {other:?}"),
    };
    for (params, name) in [
        (&[("sort", "n")][..], "sort"),
        (&[("sort", r#"["n"]"#)], "sort"),
        (&[("sort", r#"["n","UP"]"#)], "sort"),
        (&[("sort", r#"["n","ASC","x"]"#)], "sort"),
        (&[("sort", r#"[1,"ASC"]"#)], "sort"),
        (&[("sort", r#"["nope","ASC"]"#)], "sort"),
        (&[("sort", r#"["n","ASC"]"#), ("_sort", "id")], "sort"),
        (&[("sort", r#"["n","ASC"]"#), ("_order", "asc")], "sort"),
        (&[("sort", "[]"), ("sort", "[]")], "sort"),
        (&[("range", "[0]")], "range"),
        (&[("range", "0-9")], "range"),
        (&[("range", "[-1,9]")], "range"),
        (&[("range", "[0,-1]")], "range"),
        (&[("range", "[1.5,9]")], "range"),
        (&[("range", r#"["0","9"]"#)], "range"),
        (&[("range", "[5,4]")], "range"),
        (&[("range", "[0,9]"), ("_limit", "2")], "range"),
        (&[("range", "[0,9]"), ("_page", "1")], "range"),
        (&[("filter", "[]")], "filter"),
        (&[("filter", "{")], "filter"),
        (&[("filter", r#"{"nope":1}"#)], "filter"),
        (&[("filter", r#"{"_sort":"n"}"#)], "filter"),
        (&[("filter", r#"{"n":null}"#)], "filter"),
        (&[("filter", r#"{"n":{"gte":1}}"#)], "filter"),
        (&[("filter", r#"{"n":[[1]]}"#)], "filter"),
        (&[("filter", r#"{"n_gte":[1,2]}"#)], "filter"),
        (&[("filter", r#"{"q":["a"]}"#)], "filter"),
        (&[("filter", r#"{"n":"x"}"#)], "filter"),
        (&[("filter", r#"{"n":1.5}"#)], "filter"),
        (&[("filter", r#"{"on":"yes"}"#)], "filter"),
        (&[("filter", r#"{"n_like":"1"}"#)], "filter"),
    ] {
        let (detail, hint) = refused(params);
        assert!(
            detail.starts_with(&format!("bad query parameter '{name}': ")),
            "{params:?}: {detail}"
        );
        if detail.contains("more than once") {
            continue;
        }
        assert!(!hint.is_empty(), "{params:?}: {detail}");
    }
    // A misspelt field gets a "did you mean" in the dialect's own terms.
    let (_, hint) = refused(&[("sort", r#"["nmae","DESC"]"#)]);
    assert_eq!(hint, r#"did you mean sort=["name","DESC"]?"#);
    let (_, hint) = refused(&[("filter", r#"{"nmae_like":"x"}"#)]);
    assert_eq!(hint, r#"did you mean "name_like"?"#);
    // `q` in the filter and in the query is `q` twice.
    assert!(error(&dialect(&[("filter", r#"{"q":"a"}"#), ("q", "b")])).contains("more than once"));
}

#[test]
fn relations_are_said_to_be_none() {
    for name in ["_embed", "_expand", "embed"] {
        let message = error(&format!("{name}=comments"));
        assert_eq!(
            message,
            format!(
                "bad query parameter '{name}': widgets and todos have no relations, so there is \
                 nothing to embed or expand"
            )
        );
    }
}

#[test]
fn a_member_repeated_in_filter_is_400_as_in_a_body() {
    for text in [r#"{"n":1,"n":2}"#, r#"{"id":[1],"on":true,"id":[2]}"#] {
        let refused = error(&dialect(&[("filter", text)]));
        assert!(
            refused.contains("is given more than once"),
            "{text}: {refused}"
        );
        assert!(refused.contains("'filter'"), "{text}: {refused}");
    }
    assert!(error(&dialect(&[("filter", "[1]")])).contains("not a JSON object"));
    assert!(error(&dialect(&[("filter", "{")])).contains("not valid JSON"));
}
