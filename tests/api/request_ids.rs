//! `X-Request-Id`: on every response, the client's own when it is
//! sane, else one the server makes; the same id in a problem document's
//! `instance` and in the access log line.

use std::collections::HashSet;
use std::sync::Arc;

use widgets_todos::http::{Request, Response as Reply};

use crate::cli::{get, spawn, stop_with};
use crate::support::{Response, TestServer, config, parse_responses, problem};

const TODO: &str = r#"{"userId": 1, "title": "t"}"#;

/// The response's id, after checking it is there once and looks like one
/// the server would send.
fn id_of(response: &Response) -> String {
    assert_eq!(response.header_count("X-Request-Id"), 1, "{response:?}");
    let id = response.header("X-Request-Id").unwrap().to_string();
    assert!(
        (1..=64).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)),
        "{id:?}"
    );
    id
}

/// A problem document's `instance` names the response's id.
fn instance_matches(response: &Response, status: u16) {
    let id = id_of(response);
    assert_eq!(
        problem(response, status)["instance"],
        format!("urn:request:{id}")
    );
}

#[test]
fn every_kind_of_response_carries_an_id() {
    let server = TestServer::start();
    let list = server.get("/api/todos");
    assert_eq!(list.status, 200);
    id_of(&list);

    let created = server.send(
        "POST",
        "/api/todos",
        &["Content-Type: application/json"],
        TODO.as_bytes(),
    );
    assert_eq!(created.status, 201);
    id_of(&created);

    let etag = created.header("ETag").unwrap().to_string();
    let unchanged = server.send(
        "GET",
        "/api/todos/1",
        &[&format!("If-None-Match: {etag}")],
        b"",
    );
    assert_eq!(unchanged.status, 304);
    id_of(&unchanged);

    let head = server.send("HEAD", "/api/todos", &[], b"");
    assert_eq!(head.status, 200);
    id_of(&head);

    let preflight = server.preflight("/api/todos", "POST");
    assert_eq!(preflight.status, 204);
    id_of(&preflight);
    let origin = "Origin: http://localhost:3000";
    let list = server.send("GET", "/api/todos", &[origin], b"");
    let exposed = list.header("Access-Control-Expose-Headers");
    assert!(
        exposed.is_some_and(|e| e.contains("X-Request-Id")),
        "{list:?}"
    );

    let delayed = server.get("/api/todos?_delay=20");
    assert_eq!(delayed.status, 200);
    id_of(&delayed);

    instance_matches(&server.get("/api/nothing"), 404);
    instance_matches(&server.send("PUT", "/api/todos", &[], b""), 405);
    let invalid = server.send(
        "POST",
        "/api/todos",
        &["Content-Type: application/json"],
        br#"{"userId": 1, "title": ""}"#,
    );
    instance_matches(&invalid, 422);

    let deleted = server.delete("/api/todos/1");
    assert_eq!(deleted.status, 200);
    id_of(&deleted);
}

#[test]
fn responses_the_transport_makes_carry_an_id() {
    // 400: ambiguous framing, refused before the application sees it.
    let server = TestServer::start();
    let wire = server.raw(
        b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
          Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    let refused = parse_responses(&wire, false);
    instance_matches(&refused[0], 400);

    // 413, before the body is read.
    let mut small = config();
    small.max_body_bytes = 16;
    let server = TestServer::with_config(small);
    let big = server.send(
        "POST",
        "/api/todos",
        &["Content-Type: application/json"],
        TODO.as_bytes(),
    );
    instance_matches(&big, 413);

    // 500: a handler that panics.
    let handler: Arc<dyn widgets_todos::http::Handler> =
        Arc::new(|_: &mut Request<'_>| -> Reply { panic!("on purpose") });
    let server = TestServer::with_handler(handler);
    instance_matches(&server.get("/api/todos"), 500);
}

#[test]
fn a_sane_client_id_is_echoed() {
    let server = TestServer::start();
    for id in [
        "abc-123",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "trace:1.2_3",
    ] {
        let response = server.send("GET", "/api/todos", &[&format!("X-Request-Id: {id}")], b"");
        assert_eq!(id_of(&response), id);
        let missing = server.send("GET", "/api/none", &[&format!("X-Request-Id: {id}")], b"");
        assert_eq!(
            problem(&missing, 404)["instance"],
            format!("urn:request:{id}")
        );
    }
}

#[test]
fn an_insane_client_id_is_replaced_never_echoed() {
    let server = TestServer::start();
    let long = "x".repeat(65);
    let ask = |value: &str| {
        let wire = server.raw(
            format!(
                "GET /api/todos HTTP/1.1\r\nHost: t\r\nConnection: close\r\nX-Request-Id: {value}\r\n\r\n"
            )
            .as_bytes(),
        );
        let text = String::from_utf8_lossy(&wire).to_string();
        assert!(!text.contains("Set-Cookie"), "{text}");
        let mut responses = parse_responses(&wire, false);
        assert_eq!(responses.len(), 1, "{text}");
        responses.remove(0)
    };
    // Too long, a space, a quote, a CR LF spelled as percent-escapes:
    // replaced.
    for sent in [&*long, "a b", "a\"b", "a%0d%0aSet-Cookie:x=1"] {
        let response = ask(sent);
        assert_eq!(response.status, 200, "{sent:?}");
        assert_ne!(id_of(&response), sent);
    }
    // Control characters (a tab, which RFC 9110 section 5.5 allows inside
    // a value, included) and a bare CR never reach us: tiny_http answers
    // 400 itself, without an id.
    for sent in ["a\u{1}b", "a\tb", "a\rSet-Cookie: x=1"] {
        let response = ask(sent);
        assert_eq!(response.status, 400, "{sent:?}");
        assert_eq!(response.header("X-Request-Id"), None, "{sent:?}");
    }
}

#[test]
fn two_requests_get_different_ids() {
    let server = TestServer::start();
    let ids: HashSet<String> = (0..20).map(|_| id_of(&server.get("/api/todos"))).collect();
    assert_eq!(ids.len(), 20);
}

#[test]
fn the_access_log_line_carries_the_id() {
    let (child, addr) = spawn(&["--port", "0", "--log-level", "info"], &[]);
    let wire = get(&addr, "/api/todos?mine");
    let id = wire
        .lines()
        .find_map(|line| line.strip_prefix("X-Request-Id: "))
        .unwrap_or_else(|| panic!("no id in {wire}"))
        .trim()
        .to_string();
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let access = log
        .lines()
        .find(|l| l.contains("GET /api/todos?mine"))
        .unwrap_or_else(|| panic!("no access line in {log}"));
    assert!(access.ends_with(&format!("ms id={id}")), "{access}");
}
