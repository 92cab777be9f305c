//! The request log without a socket: its bounds, its filters, and what an
//! entry keeps.

use super::*;

/// Records one request with `method`, `target` and `body`, answered with
/// `status` and no body.
fn record(recorder: &Recorder, method: &str, target: &str, body: Option<&[u8]>, status: u16) {
    let mut empty: &[u8] = b"";
    let req = Request {
        method: Method::parse(method),
        method_name: method,
        id: "test-1",
        target,
        headers: vec![
            ("Accept", "*/*".into()),
            ("Authorization", "Bearer s3cret".into()),
        ],
        content_length: None,
        body: &mut empty,
        max_body_bytes: 1024,
        body_read: None,
    };
    let response = Response::empty(status);
    recorder.add(&req, body.map(<[u8]>::to_vec), &response, Started::now());
}

fn pairs(query: &str) -> Vec<(String, String)> {
    crate::http::query_pairs(query).unwrap()
}

/// The `seq` of the entries `query` selects, and the total.
fn seqs(recorder: &Recorder, query: &str) -> (Vec<u64>, usize) {
    let (entries, total) = recorder.select(&Filter::parse(&pairs(query)).unwrap(), PAGE_BYTES);
    (entries.iter().map(|e| e.seq).collect(), total)
}

#[test]
fn keeps_the_last_n_and_never_reuses_a_seq() {
    let recorder = Recorder::new(3);
    for _ in 0..5 {
        record(&recorder, "GET", "/api/todos", None, 200);
    }
    assert_eq!(seqs(&recorder, ""), (vec![5, 4, 3], 3));
    recorder.clear();
    assert_eq!(seqs(&recorder, ""), (vec![], 0));
    record(&recorder, "GET", "/api/todos", None, 200);
    assert_eq!(seqs(&recorder, ""), (vec![6], 1));
}

#[test]
fn keeps_at_most_the_byte_budget_but_always_the_newest() {
    let body = [b'x'; 1000];
    let one = Recorder::new(1);
    record(&one, "POST", "/api/todos", Some(&body), 201);
    let cost = lock(&one.state).bytes;
    assert!(cost > body.len(), "{cost}");
    // Room for three and a half entries.
    let budget = 3 * cost + cost / 2;
    let recorder = Recorder {
        budget,
        ..Recorder::new(MAX_RECORD)
    };
    for _ in 0..10 {
        record(&recorder, "POST", "/api/todos", Some(&body), 201);
    }
    assert_eq!(seqs(&recorder, ""), (vec![10, 9, 8], 3));
    assert_eq!(lock(&recorder.state).bytes, 3 * cost);
    let huge = vec![b'x'; budget + 1];
    record(&recorder, "POST", "/api/todos", Some(&huge), 413);
    assert_eq!(seqs(&recorder, ""), (vec![11], 1));
    record(&recorder, "GET", "/api/todos", None, 200);
    assert_eq!(seqs(&recorder, ""), (vec![12], 1));
}

#[test]
fn filters_select_newest_first() {
    let recorder = Recorder::new(10);
    record(&recorder, "POST", "/api/todos", Some(b"{}"), 201);
    record(&recorder, "GET", "/api/todos?_page=2", None, 200);
    record(&recorder, "GET", "/api/todos/1", None, 404);
    record(&recorder, "PATCH", "/api/todos/1", Some(b"{}"), 200);
    assert_eq!(seqs(&recorder, ""), (vec![4, 3, 2, 1], 4));
    assert_eq!(seqs(&recorder, "method=GET"), (vec![3, 2], 2));
    assert_eq!(seqs(&recorder, "method=get"), (vec![], 0));
    assert_eq!(seqs(&recorder, "path=/api/todos"), (vec![2, 1], 2));
    assert_eq!(seqs(&recorder, "status=200"), (vec![4, 2], 2));
    assert_eq!(seqs(&recorder, "since=2"), (vec![4, 3], 2));
    assert_eq!(seqs(&recorder, "limit=1"), (vec![4], 4));
    assert_eq!(seqs(&recorder, "limit=0&method=GET"), (vec![], 2));
    assert_eq!(
        seqs(&recorder, "method=GET&path=/api/todos/1&_=1"),
        (vec![3], 1)
    );
}

#[test]
fn bad_filters_are_400_naming_the_parameter() {
    for (query, named) in [
        ("status=99", "'status'"),
        ("status=600", "'status'"),
        ("status=2xx", "'status'"),
        ("since=-1", "'since'"),
        ("since=01", "'since'"),
        ("limit=100001", "'limit'"),
        ("method=", "'method'"),
        ("path=", "'path'"),
        ("method=GET&method=POST", "'method'"),
        ("verbose=1", "'verbose'"),
    ] {
        let err = Filter::parse(&pairs(query)).unwrap_err();
        assert_eq!(err.status(), 400, "{query}");
        assert!(err.to_string().contains(named), "{query}: {err}");
    }
    let err = Filter::parse(&pairs("statuss=200")).unwrap_err();
    assert_eq!(err.hint(), Some("did you mean status?"));
}

#[test]
fn an_authorization_value_is_never_kept() {
    assert_eq!(hidden("Authorization", "Bearer s3cret"), "Bearer (hidden)");
    assert_eq!(
        hidden("Authorization", "basic dXNlcjpwdw=="),
        "basic (hidden)"
    );
    assert_eq!(hidden("Authorization", "s3cret"), "(hidden)");
    assert_eq!(hidden("Authorization", "s3cret more"), "(hidden)");
    assert_eq!(hidden("Accept", "*/*"), "*/*");
    let recorder = Recorder::new(1);
    record(&recorder, "GET", "/api", None, 200);
    let (entries, _) = recorder.select(&Filter::default(), PAGE_BYTES);
    let json = serde_json::to_string(&*entries[0]).unwrap();
    assert!(!json.contains("s3cret"), "{json}");
    assert!(
        json.contains(r#""Authorization":"Bearer (hidden)""#),
        "{json}"
    );
}

#[test]
fn an_entry_as_json() {
    let recorder = Recorder::new(1);
    record(&recorder, "PUT", "/api/todos/1?x=%20", Some(b"a\xffb"), 200);
    let (entries, _) = recorder.select(&Filter::default(), PAGE_BYTES);
    let json = serde_json::to_string(&*entries[0]).unwrap();
    // The fields, in this order.
    let at = |name: &str| json.find(&format!("\"{name}\":"));
    let names = [
        "seq",
        "id",
        "time",
        "method",
        "target",
        "headers",
        "body",
        "status",
        "size",
        "duration_ms",
    ];
    let places: Vec<Option<usize>> = names.iter().map(|name| at(name)).collect();
    assert!(places.iter().all(Option::is_some), "{json}");
    assert!(places.windows(2).all(|w| w[0] < w[1]), "{json}");
    assert!(
        json.starts_with(r#"{"seq":1,"id":"test-1","time":""#),
        "{json}"
    );
    let entry: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(entry.as_object().map(|o| o.len()), Some(names.len()));
    assert_eq!(entry["target"], "/api/todos/1?x=%20");
    // Invalid UTF-8 is replaced, not refused.
    assert_eq!(entry["body"], "a\u{fffd}b");
    assert_eq!(entry["headers"]["Accept"], "*/*");
    // RFC 3339, UTC, milliseconds: 2026-11-25T16:00:00.123Z.
    let time = entry["time"].as_str().unwrap();
    assert_eq!(time.len(), 24, "{time}");
    assert!(time.ends_with('Z') && time.as_bytes()[19] == b'.', "{time}");
    assert!(entry["duration_ms"].is_number());
}

#[test]
fn a_problem_is_counted_as_sent_with_its_instance() {
    let mut empty: &[u8] = b"";
    let mut req = Request {
        method: Method::Get,
        method_name: "GET",
        id: "abc-1",
        target: "/api/nothing",
        headers: Vec::new(),
        content_length: None,
        body: &mut empty,
        max_body_bytes: 1024,
        body_read: None,
    };
    let problem = Response::from(ApiError::not_found("no resource at /api/nothing"));
    let mut sent = problem.clone();
    sent.identify("abc-1".to_string());
    assert!(sent.body_bytes().len() > problem.body_bytes().len());
    assert_eq!(body_size(&req, &problem), sent.body_bytes().len());
    req.method = Method::Head;
    assert_eq!(body_size(&req, &problem), 0);
}

#[test]
fn a_page_holds_whole_entries_within_its_bound_and_always_one() {
    let recorder = Recorder::new(10);
    for _ in 0..4 {
        record(&recorder, "POST", "/api/todos", Some(&[1u8; 100]), 400);
    }
    let (entries, total) = recorder.select(&Filter::default(), PAGE_BYTES);
    assert_eq!((entries.len(), total), (4, 4));
    let (all, sent) = page(&entries, PAGE_BYTES).unwrap();
    assert_eq!(sent, 4);
    let listed: serde_json::Value = serde_json::from_slice(&all).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(4));
    // The bound counts the bytes sent, escapes included: `\u0001` is six.
    // (Entries differ by a few bytes: `duration_ms` is measured.)
    let size = |n: usize| serde_json::to_vec(&*entries[n]).unwrap().len();
    let (one, two) = (size(0), size(0) + size(1));
    assert!(one > 600, "{one}");
    for (bound, fits) in [(0, 1), (one + 2, 1), (two + 3, 2), (two + 2, 1)] {
        let (body, sent) = page(&entries, bound).unwrap();
        assert_eq!(sent, fits, "{bound}");
        let listed: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(listed.as_array().map(Vec::len), Some(fits), "{bound}");
        assert!(body.len() <= bound.max(one + 2), "{bound}");
    }
    // `select` picks no more than fill a page: the text it counts is no
    // longer than its JSON.
    let (picked, total) = recorder.select(&Filter::default(), 150);
    assert_eq!((picked.len(), total), (2, 4));
}

#[test]
fn the_next_page_keeps_the_filters() {
    let filter = Filter::parse(&pairs(
        "path=/api/a%20b&_=1&method=GET&status=200&since=3&limit=9",
    ));
    let filter = filter.unwrap();
    assert_eq!(
        filter.next(17, 4),
        "</_admin/requests?method=GET&path=%2Fapi%2Fa+b&status=200&since=3&before=17&limit=5>; rel=\"next\""
    );
    let filter = Filter::parse(&pairs("before=40")).unwrap();
    assert_eq!(
        filter.next(31, 5),
        "</_admin/requests?before=31>; rel=\"next\""
    );
}

#[test]
fn the_openapi_document_names_the_page_bound() {
    let document = std::str::from_utf8(crate::app::OPENAPI).unwrap();
    let bound = format!("{} MiB of JSON", PAGE_BYTES >> 20);
    assert!(document.contains(&bound), "{bound}");
}
