//! Numbers a client sends that do not fit in a 32-bit `usize` (over 4 GiB)
//! get the same answer on every target: lengths, positions and counts are
//! read into `u64`. `scripts/cross.sh armv7` runs these on a 32-bit ARM
//! build, under qemu-user.

use std::io::Write;
use std::net::Shutdown;

use crate::support::{TestServer, parse_responses, problem, read_responses, read_to_close};

/// A request the server would serve if it read the bytes after a head as
/// the next request.
const SMUGGLED: &str = "POST /api/widgets HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 32\r\n\r\n{\"price\": \"1\", \"quality\": \"bad\"}";

#[test]
fn a_content_length_over_4_gib_is_413_and_nothing_after_it_is_served() {
    let server = TestServer::start();
    for expect in ["", "Expect: 100-continue\r\n"] {
        let raw = format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n{expect}\r\n{SMUGGLED}"
        );
        // The 413 comes on the head; then the server reads what follows as
        // the refused body (its lingering close) until the client is done.
        let mut stream = server.connect();
        stream.write_all(raw.as_bytes()).unwrap();
        let first = read_responses(&mut stream, 1, false).remove(0);
        let body = problem(&first, 413);
        assert!(body["detail"].as_str().unwrap().contains("65536"), "{body}");
        stream.shutdown(Shutdown::Write).unwrap();
        let rest = read_to_close(&mut stream);
        assert_eq!(
            parse_responses(&rest, false).len(),
            0,
            "{expect:?}: {rest:?}"
        );
    }
    assert_eq!(server.get("/api/widgets").text(), "[]");
}

#[test]
fn a_content_length_over_4_gib_beside_chunked_is_400() {
    // RFC 9112 section 6.3: both fields are an error. The chunked body
    // holds a todo that must not be created.
    let server = TestServer::start();
    let body = r#"{"userId": 1, "title": "x"}"#;
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let responses = parse_responses(&server.raw(raw.as_bytes()), false);
    assert_eq!(
        responses.first().map(|r| r.status),
        Some(400),
        "{responses:?}"
    );
    assert!(responses.iter().all(|r| r.status == 400), "{responses:?}");
    assert_eq!(server.get("/api/todos").text(), "[]");
}

#[test]
fn positions_and_counts_over_4_gib_are_taken_as_sent() {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "a"}"#);
    for query in [
        "_start=5000000000",
        "_start=5000000000&_end=6000000000",
        "_start=5000000000&_limit=5000000000",
        "_page=5000000000",
        "_page=5000000000&_limit=5000000000",
    ] {
        let response = server.get(&format!("/api/todos?{query}"));
        assert_eq!(response.status, 200, "{query}: {}", response.text());
        assert_eq!(response.text(), "[]", "{query}");
        assert_eq!(response.header("X-Total-Count"), Some("1"), "{query}");
    }
    // A count past a 32-bit `usize` is not cut down to it.
    let all = server.get("/api/todos?_limit=5000000000");
    assert_eq!(all.json().as_array().map(Vec::len), Some(1));
    let link = server.get("/api/todos?_page=1&_limit=5000000000");
    let link = link.header("Link").unwrap_or_default();
    assert!(
        link.contains("_page=1&_limit=5000000000>; rel=\"last\""),
        "{link}"
    );
    let refused = server.get("/api/todos?_start=6000000000&_end=5000000000");
    let body = problem(&refused, 400);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("_end (5000000000) is before _start (6000000000)"),
        "{body}"
    );
    // The simple-rest dialect's range, from 0.
    let ranged = server.get("/api/todos?range=%5B5000000000%2C5000000009%5D");
    assert_eq!(ranged.status, 200, "{}", ranged.text());
    assert_eq!(ranged.text(), "[]");
    assert_eq!(ranged.header("Content-Range"), Some("todos */1"));
    let wide = server.get("/api/todos?range=%5B0%2C5000000000%5D");
    assert_eq!(wide.header("Content-Range"), Some("todos 0-0/1"));
}
