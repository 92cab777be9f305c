//! The request log of `--record N`: what the client
//! sent, as `/_admin/requests` tells it; its filters, its bound, its
//! errors; and what it never keeps.

use serde_json::Value;

use crate::cli::{check_refused, spawn_remote_env, stop_with};
use crate::support::{Response, TestServer, config, parse_responses, problem};

/// A server recording the last `n` requests.
fn recording(n: usize) -> TestServer {
    let mut config = config();
    config.record = Some(n);
    TestServer::with_config(config)
}

/// `GET /_admin/requests` with `query`: the entries and `X-Total-Count`.
fn request_log(server: &TestServer, query: &str) -> (Vec<Value>, usize) {
    let response = server.get(&format!("/_admin/requests{query}"));
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        response.header("Content-Type"),
        Some("application/json"),
        "{response:?}"
    );
    let total = response.header("X-Total-Count").expect("X-Total-Count");
    let entries = response.json().as_array().expect("an array").clone();
    (entries, total.parse().expect("a count"))
}

/// The `seq` of each entry.
fn seqs(entries: &[Value]) -> Vec<u64> {
    entries.iter().map(|e| e["seq"].as_u64().unwrap()).collect()
}

fn id_of(response: &Response) -> &str {
    response.header("X-Request-Id").expect("X-Request-Id")
}

#[test]
fn off_by_default_the_request_log_is_404_saying_how_to_turn_it_on() {
    let server = TestServer::start();
    for path in ["/_admin/requests", "/_admin/requests/abc-1"] {
        let body = problem(&server.get(path), 404);
        assert!(
            body["hint"].as_str().unwrap().contains("--record N"),
            "{body}"
        );
    }
    let body = problem(&server.get("/_admin/other"), 404);
    assert!(body.get("hint").is_none(), "{body}");
}

#[test]
fn each_exchange_is_recorded_as_the_client_sent_it() {
    let server = recording(10);
    let created = server.send(
        "POST",
        "/api/todos?_delay=0",
        &[
            "Content-Type: application/json",
            "X-Request-Id: create-1",
            "User-Agent: not-read",
        ],
        br#"{"userId": 1, "title": "Buy milk"}"#,
    );
    assert_eq!(created.status, 201);
    let completed = server.json("PATCH", "/api/todos/1", r#"{"completed": true}"#);
    assert_eq!(completed.status, 200);
    let deleted = server.delete("/api/todos/1");
    assert_eq!(deleted.status, 200);

    let (entries, total) = request_log(&server, "");
    assert_eq!(total, 3);
    // Newest first.
    let [delete, patch, post] = &entries[..] else {
        panic!("{entries:?}")
    };
    assert_eq!(seqs(&entries), [3, 2, 1]);
    assert_eq!(post["id"], "create-1");
    assert_eq!(post["method"], "POST");
    assert_eq!(post["target"], "/api/todos?_delay=0");
    assert_eq!(post["body"], r#"{"userId": 1, "title": "Buy milk"}"#);
    assert_eq!(post["status"], 201);
    assert_eq!(post["size"], created.body.len());
    // Only the header fields the server reads.
    assert_eq!(
        post["headers"],
        serde_json::json!({"Content-Type": "application/json", "X-Request-Id": "create-1"})
    );
    assert_eq!(patch["id"], id_of(&completed));
    assert_eq!(patch["method"], "PATCH");
    assert_eq!(patch["body"], r#"{"completed": true}"#);
    assert_eq!(patch["size"], completed.body.len());
    assert_eq!(delete["id"], id_of(&deleted));
    assert_eq!(delete["body"], Value::Null);
    assert_eq!(
        (delete["status"].as_u64(), delete["size"].as_u64()),
        (Some(200), Some(deleted.body.len() as u64))
    );
    for entry in &entries {
        let time = entry["time"].as_str().unwrap();
        assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
        assert!(entry["duration_ms"].as_f64().unwrap() >= 0.0, "{entry}");
    }

    // One entry by its request id; the request log's own requests are never
    // recorded.
    let one = server.get(&format!("/_admin/requests/{}", id_of(&completed)));
    assert_eq!(one.status, 200);
    assert_eq!(one.json(), *patch);
    assert_eq!(
        server.send("HEAD", "/_admin/requests", &[], b"").status,
        200
    );
    assert_eq!(request_log(&server, "").1, 3);
}

#[test]
fn a_body_never_read_is_null_and_errors_are_recorded_too() {
    let server = recording(10);
    let missing = server.json("POST", "/api/nothing", r#"{"a": 1}"#);
    let unsupported = server.send(
        "POST",
        "/api/todos",
        &["Content-Type: text/plain"],
        b"title=x",
    );
    let invalid = server.json("POST", "/api/todos", r#"{"userId": 0}"#);
    let (entries, _) = request_log(&server, "");
    let [invalid_entry, unsupported_entry, missing_entry] = &entries[..] else {
        panic!("{entries:?}")
    };
    for (entry, response, status, body) in [
        (missing_entry, &missing, 404, Value::Null),
        (unsupported_entry, &unsupported, 415, Value::Null),
        (invalid_entry, &invalid, 422, r#"{"userId": 0}"#.into()),
    ] {
        problem(response, status);
        assert_eq!(entry["status"], status, "{entry}");
        assert_eq!(entry["body"], body, "{entry}");
        // The problem document as sent, with its `instance`.
        assert_eq!(entry["size"], response.body.len(), "{entry}");
        assert_eq!(entry["id"], id_of(response), "{entry}");
    }
}

#[test]
fn a_refused_request_is_recorded() {
    let server = recording(10);
    let wire = server.raw(
        b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
          Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    let refused = parse_responses(&wire, false);
    problem(&refused[0], 400);
    let (entries, total) = request_log(&server, "");
    assert_eq!(total, 1);
    assert_eq!(entries[0]["status"], 400);
    assert_eq!(entries[0]["id"], id_of(&refused[0]));
}

#[test]
fn n_plus_one_requests_keep_the_last_n() {
    let server = recording(3);
    for n in 1..=4 {
        assert_eq!(server.get(&format!("/api/todos?n={n}")).status, 400);
    }
    let (entries, total) = request_log(&server, "");
    assert_eq!(total, 3);
    assert_eq!(seqs(&entries), [4, 3, 2]);
    assert_eq!(entries[2]["target"], "/api/todos?n=2");
}

#[test]
fn filters_select_and_count() {
    let server = recording(20);
    server.create("/api/todos", r#"{"userId": 1, "title": "a"}"#);
    server.get("/api/todos/1");
    server.get("/api/todos/2");
    server.get("/api/todos?_page=1");
    server.json("PATCH", "/api/todos/1", r#"{"completed": true}"#);
    let check = |query: &str, expected: &[u64], total: usize| {
        let (entries, counted) = request_log(&server, query);
        assert_eq!(seqs(&entries), expected, "{query}");
        assert_eq!(counted, total, "{query}");
    };
    check("?method=GET", &[4, 3, 2], 3);
    check("?method=PATCH", &[5], 1);
    check("?path=/api/todos", &[4, 1], 2);
    check("?status=404", &[3], 1);
    check("?since=3", &[5, 4], 2);
    check("?limit=2", &[5, 4], 5);
    check("?method=GET&status=200&limit=1", &[4], 2);
    check("?method=DELETE&_=17", &[], 0);
    // HEAD: the count, no body.
    let head = server.send("HEAD", "/_admin/requests?method=GET", &[], b"");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("X-Total-Count"), Some("3"));
    assert!(head.body.is_empty());
}

#[test]
fn a_bad_filter_is_400_naming_it_and_changes_nothing() {
    let server = recording(10);
    server.get("/api/todos");
    for (query, named) in [
        ("?statuss=200", "'statuss'"),
        ("?status=2xx", "'status'"),
        ("?status=600", "'status'"),
        ("?since=-1", "'since'"),
        ("?limit=x", "'limit'"),
        ("?method=", "'method'"),
        ("?path=/a&path=/b", "'path'"),
        ("?_delay=x", "'_delay'"),
        ("?a=%zz", "'a'"),
    ] {
        let body = problem(&server.get(&format!("/_admin/requests{query}")), 400);
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains(named), "{query}: {body}");
    }
    let body = problem(&server.get("/_admin/requests?statuss=200"), 400);
    assert_eq!(body["hint"], "did you mean status?");
    assert_eq!(request_log(&server, "").1, 1);
}

#[test]
fn one_entry_by_id_the_newest_when_an_id_was_reused() {
    let server = recording(10);
    for path in ["/api/todos", "/api/widgets"] {
        let sent = server.send("GET", path, &["X-Request-Id: same"], b"");
        assert_eq!(sent.status, 200);
    }
    let one = server.get("/_admin/requests/same");
    assert_eq!(one.status, 200);
    assert_eq!(one.json()["target"], "/api/widgets");
    let body = problem(&server.get("/_admin/requests/unknown-7"), 404);
    assert!(
        body["detail"].as_str().unwrap().contains("unknown-7"),
        "{body}"
    );
    problem(&server.get("/_admin/requests/same?x=1"), 400);
}

#[test]
fn delete_empties_the_request_log_and_seq_goes_on() {
    let server = recording(10);
    server.get("/api/todos");
    server.get("/api/todos");
    let deleted = server.delete("/_admin/requests");
    assert_eq!(deleted.status, 204);
    assert_eq!(request_log(&server, ""), (vec![], 0));
    server.get("/api/todos");
    let (entries, _) = request_log(&server, "");
    assert_eq!(seqs(&entries), [3]);
    problem(&server.delete("/_admin/requests?method=GET"), 400);
}

#[test]
fn other_methods_are_405_with_allow() {
    let server = recording(10);
    for (method, path, allow) in [
        ("POST", "/_admin/requests", "GET, HEAD, DELETE, OPTIONS"),
        ("PUT", "/_admin/requests", "GET, HEAD, DELETE, OPTIONS"),
        ("DELETE", "/_admin/requests/x", "GET, HEAD, OPTIONS"),
        ("PATCH", "/_admin/requests/x", "GET, HEAD, OPTIONS"),
    ] {
        let response = server.send(method, path, &[], b"");
        problem(&response, 405);
        assert_eq!(response.header("Allow"), Some(allow), "{method} {path}");
    }
    let options = server.send("OPTIONS", "/_admin/requests", &[], b"");
    assert_eq!(options.status, 204);
    assert_eq!(options.header("Allow"), Some("GET, HEAD, DELETE, OPTIONS"));
    let html = server.send("GET", "/_admin/requests", &["Accept: text/html"], b"");
    problem(&html, 406);
    problem(&server.get("/_admin/nothing"), 404);
    // None of these were recorded.
    assert_eq!(request_log(&server, "").1, 0);
}

#[test]
fn with_a_token_the_request_log_needs_it_and_never_keeps_it() {
    let mut config = config();
    config.record = Some(10);
    config.auth_token = Some(widgets_todos::config::Secret::new("s3cret"));
    let server = TestServer::with_config(config);
    let bearer = "Authorization: Bearer s3cret";
    assert_eq!(server.send("GET", "/api/todos", &[bearer], b"").status, 200);
    assert_eq!(server.get("/api/todos").status, 401);
    problem(&server.get("/_admin/requests"), 401);
    problem(&server.delete("/_admin/requests"), 401);
    problem(&server.get("/_admin/requests/x"), 401);
    let preflight = server.preflight("/_admin/requests", "GET");
    assert_eq!(preflight.status, 204);
    let listed = server.send("GET", "/_admin/requests", &[bearer], b"");
    assert_eq!(listed.status, 200);
    assert!(!listed.text().contains("s3cret"), "{}", listed.text());
    let entries = listed.json();
    assert_eq!(entries.as_array().map(Vec::len), Some(2), "{entries}");
    assert_eq!(
        entries[1]["headers"]["Authorization"], "Bearer (hidden)",
        "{entries}"
    );
    assert_eq!(entries[0]["status"], 401);
}

#[test]
fn admin_responses_carry_cors_and_an_id() {
    let server = recording(10);
    let origin = "Origin: http://localhost:3000";
    let response = server.send("GET", "/_admin/requests", &[origin], b"");
    let allowed = response.header("Access-Control-Allow-Origin");
    assert_eq!(allowed, Some("http://localhost:3000"));
    assert!(response.header("X-Request-Id").is_some());
}

#[test]
fn a_bad_record_value_exits_2_saying_the_range() {
    let range = "from 1 to 100000";
    check_refused(&["--record", "0"], &[], &["--record", range]);
    check_refused(&["--record", "100001"], &[], &["--record", range]);
    check_refused(&["--record", "ten"], &[], &["--record", range]);
    check_refused(&[], &[("RECORD", "-1")], &["RECORD", range]);
    // The variable turns it on as the flag does.
    let (child, remote) = spawn_remote_env(&["--port", "0"], &[("RECORD", "5")]);
    assert_eq!(remote.get("/api/todos").status, 200);
    let listed = remote.get("/_admin/requests");
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert_eq!(listed.header("X-Total-Count"), Some("1"));
    assert!(log.contains("recording the last 5 requests"), "{log}");
}

#[test]
fn the_openapi_document_describes_the_request_log_as_a_feature() {
    let server = recording(10);
    let document = server.get("/api/openapi.json").json();
    for (path, methods) in [
        (
            "/_admin/requests",
            &["get", "head", "delete", "options"][..],
        ),
        ("/_admin/requests/{id}", &["get", "head", "options"][..]),
    ] {
        for method in methods {
            let operation = &document["paths"][path][method];
            assert_eq!(operation["x-feature"], "record", "{method} {path}");
        }
    }
    let schema = &document["components"]["schemas"]["RecordedRequest"];
    let required = schema["required"].as_array().expect("required fields");
    // The fields the schema requires are the fields an entry has.
    server.get("/api/todos");
    let (entries, _) = request_log(&server, "");
    let fields: Vec<&String> = entries[0].as_object().unwrap().keys().collect();
    assert_eq!(required.len(), fields.len(), "{required:?} {fields:?}");
    for field in fields {
        assert!(required.iter().any(|r| r == field.as_str()), "{field}");
    }
}

#[test]
fn failures_on_purpose_are_recorded_the_closed_one_as_444() {
    let mut config = config();
    config.record = Some(10);
    config.faults.on = true;
    let server = TestServer::with_config(config);
    let failed = server.get("/api/todos?_status=503");
    problem(&failed, 503);
    let closed = server.raw(b"GET /api/todos?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n");
    assert!(closed.is_empty(), "{}", String::from_utf8_lossy(&closed));
    let (entries, total) = request_log(&server, "");
    assert_eq!(total, 2);
    assert_eq!(entries[1]["status"], 503);
    assert_eq!(entries[1]["size"], failed.body.len());
    assert_eq!(entries[1]["id"], id_of(&failed));
    // No response: the status the access log shows, and no body.
    assert_eq!(entries[0]["target"], "/api/todos?_fault=close");
    assert_eq!(
        (entries[0]["status"].as_u64(), entries[0]["size"].as_u64()),
        (Some(444), Some(0))
    );
    // The request log itself never fails on purpose.
    problem(&server.get("/_admin/requests?_status=503"), 400);
}

/// The most bytes of JSON one listing sends: 4 MiB (README, Request
/// request log, "Bounded memory").
const PAGE_BYTES: usize = 4 << 20;

/// The target of `rel="next"` in a `Link` value (RFC 8288).
fn next_link(response: &Response) -> Option<String> {
    let link = response.header("Link")?;
    let (target, params) = link.split_once(';')?;
    assert!(params.contains(r#"rel="next""#), "{link}");
    Some(target.trim().trim_matches(['<', '>']).to_string())
}

/// Follows `Link: rel="next"` from `target` to the last page: the seqs of
/// every page, each page at most [`PAGE_BYTES`] and complete JSON, and
/// the first page's `X-Total-Count`.
fn walk(server: &TestServer, target: &str) -> (Vec<Vec<u64>>, usize) {
    let mut pages = Vec::new();
    let mut target = Some(target.to_string());
    let mut total = None;
    while let Some(at) = target {
        assert!(pages.len() < 100, "{at}");
        let response = server.get(&at);
        assert_eq!(response.status, 200, "{at}: {}", response.text());
        assert!(response.body.len() <= PAGE_BYTES, "{at}");
        let count: usize = response.header("X-Total-Count").unwrap().parse().unwrap();
        total.get_or_insert(count);
        let head = server.send("HEAD", &at, &[], b"");
        assert_eq!(
            head.header("Content-Length"),
            Some(&*response.body.len().to_string()),
            "{at}"
        );
        assert_eq!(head.header("Link"), response.header("Link"), "{at}");
        pages.push(seqs(response.json().as_array().expect("an array")));
        target = next_link(&response);
    }
    (pages, total.unwrap())
}

#[test]
fn a_listing_stops_at_4_mib_and_links_to_the_rest() {
    let server = recording(1000);
    // Each 0x01 is six bytes in JSON (`\u0001`): a 64 KiB body, 384 KiB.
    let body = vec![1u8; 65_536];
    for n in 1..=25u64 {
        if n % 5 == 0 {
            assert_eq!(server.get("/api/todos").status, 200);
        } else {
            let sent = server.send(
                "POST",
                "/api/todos",
                &["Content-Type: application/json"],
                &body,
            );
            assert_eq!(sent.status, 400, "{}", sent.text());
        }
    }
    let (pages, total) = walk(&server, "/_admin/requests");
    assert_eq!(total, 25);
    assert!(pages.len() >= 2, "{pages:?}");
    // Every entry once, newest first, across the pages.
    let all: Vec<u64> = pages.concat();
    assert_eq!(all, (1..=25).rev().collect::<Vec<_>>());

    // The filters carry over to the next page; `limit` counts the entries
    // still to come.
    let (pages, total) = walk(&server, "/_admin/requests?method=POST&since=3&limit=15");
    assert_eq!(total, 17);
    let all: Vec<u64> = pages.concat();
    let posts: Vec<u64> = (4..=25).rev().filter(|n| n % 5 != 0).take(15).collect();
    assert_eq!(all, posts);
    assert!(pages.len() >= 2, "{pages:?}");
    // A page that holds everything has no `Link`.
    let (pages, _) = walk(&server, "/_admin/requests?method=GET");
    assert_eq!(pages, [vec![25, 20, 15, 10, 5]]);
}

#[test]
fn before_selects_the_entries_older_than_a_seq() {
    let server = recording(10);
    for _ in 0..5 {
        server.get("/api/todos");
    }
    let (entries, total) = request_log(&server, "?before=4");
    assert_eq!((seqs(&entries), total), (vec![3, 2, 1], 3));
    let (entries, total) = request_log(&server, "?before=5&since=1&limit=2");
    assert_eq!((seqs(&entries), total), (vec![4, 3], 3));
    let (entries, total) = request_log(&server, "?before=0");
    assert_eq!((seqs(&entries), total), (vec![], 0));
    for query in ["?before=-1", "?before=x", "?before=1&before=2"] {
        let body = problem(&server.get(&format!("/_admin/requests{query}")), 400);
        assert!(
            body["detail"].as_str().unwrap().contains("'before'"),
            "{body}"
        );
    }
}
