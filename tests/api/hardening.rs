//! Broken and hostile clients: framing, timeouts, and the accept loop
//! surviving idleness. The heavier attacks live in scripts/abuse.py.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::support::{TestServer, config, parse_responses, problem, read_responses, read_to_close};

/// A server whose read and write timeouts are one second.
fn impatient() -> TestServer {
    let mut config = config();
    config.read_timeout = Duration::from_secs(1);
    config.write_timeout = Duration::from_secs(1);
    TestServer::with_config(config)
}

/// A widget creation hidden in a body, for smuggling attempts.
const SMUGGLED: &str = "POST /api/widgets HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 32\r\n\r\n{\"price\": \"1\", \"quality\": \"bad\"}";

#[test]
fn ambiguous_framing_is_400_and_nothing_after_it_is_served() {
    let server = impatient();
    let cases = [
        format!(
            "Content-Length: 0\r\nContent-Length: {}\r\n",
            SMUGGLED.len()
        ),
        "Content-Length: +5\r\n".to_string(),
        "Content-Length: -1\r\n".to_string(),
        "Content-Length: 1 2\r\n".to_string(),
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n".to_string(),
    ];
    for headers in cases {
        let raw = format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n{headers}\r\n{SMUGGLED}"
        );
        let wire = server.raw(raw.as_bytes());
        let responses = parse_responses(&wire, false);
        let first = responses
            .first()
            .unwrap_or_else(|| panic!("no response to {headers:?}"));
        let body = problem(first, 400);
        assert!(
            body["detail"].as_str().unwrap().contains("framing"),
            "{body}"
        );
        // tiny_http may add its own bodiless 400 when the read times out;
        // nothing else may follow.
        assert!(
            responses[1..].iter().all(|r| r.status == 400),
            "{headers:?}: {responses:?}"
        );
    }
    assert_eq!(
        server.get("/api/widgets").text(),
        "[]",
        "a smuggled request was served"
    );
}

#[test]
fn a_stalled_body_gets_408_and_the_rest_is_not_served() {
    let server = impatient();
    let mut stream = server.connect();
    // Over 1024 bytes, so tiny_http does not read it before queueing.
    stream
        .write_all(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{\"userId\": 1,")
        .unwrap();
    let started = Instant::now();
    let seen = crate::support::read_head(&mut stream, "a 408");
    assert!(
        seen.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The rest of that body is not taken for a request.
    let _ = stream.write_all(SMUGGLED.as_bytes());
    let rest = read_to_close(&mut stream);
    assert!(
        !String::from_utf8_lossy(&rest).contains("201"),
        "{}",
        String::from_utf8_lossy(&rest)
    );
    assert_eq!(server.get("/api/todos").text(), "[]");
    assert_eq!(server.get("/api/widgets").text(), "[]");
}

#[test]
fn an_idle_connection_is_closed_after_the_read_timeout() {
    let server = impatient();
    let mut stream = server.connect();
    stream.write_all(b"GET /api HT").unwrap();
    let started = Instant::now();
    let wire = read_to_close(&mut stream);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    // No request was served; at most tiny_http's own bodiless notice.
    assert!(!String::from_utf8_lossy(&wire).contains("200 OK"));
}

#[test]
fn the_server_keeps_accepting_through_idle_read_timeouts() {
    // Linux applies SO_RCVTIMEO to accept() too: every idle second, accept()
    // fails with EAGAIN, which must not end the accept loop (tiny_http's own
    // loop ended on it).
    let server = impatient();
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(server.get("/api").status, 200);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server.get("/api/todos").status, 200);
}

#[test]
fn a_trickled_body_gets_408_within_the_read_timeout() {
    // One byte every 300 ms never trips the 1 s per-read timeout; only the
    // deadline on the whole body does.
    trickled_body_gets_408(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{",
    );
}

#[test]
fn a_trickled_upgrade_body_gets_408_too() {
    // With `Connection: upgrade` tiny_http hands over the raw connection as
    // the body, even a short one, and reads none of it first: it must get
    // the same deadline as any body still arriving.
    trickled_body_gets_408(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
}

/// Sends `head` (ending in the first byte of a body), then a byte every
/// 300 ms: a 408 must come within 3 s.
fn trickled_body_gets_408(head: &str) {
    let server = impatient();
    let mut stream = server.connect();
    stream.write_all(head.as_bytes()).unwrap();
    stream.set_nonblocking(true).unwrap();
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(6)
        && crate::support::find(&seen, b"\r\n\r\n").is_none()
    {
        std::thread::sleep(Duration::from_millis(300));
        let _ = stream.write_all(b" ");
        match std::io::Read::read(&mut stream, &mut buf) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    assert!(
        seen.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_condemned_connection_is_closed_when_its_next_request_arrives() {
    // The server's read timeout (30 s) is far longer than the client's
    // (support::IO_TIMEOUT): the close must come from the framing error,
    // when the request smuggled after it arrives, not from the timeout.
    let server = TestServer::start();
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 0\r\nContent-Length: {}\r\n\r\n{SMUGGLED}",
        SMUGGLED.len()
    );
    let wire = server.raw(raw.as_bytes());
    let responses = parse_responses(&wire, false);
    assert_eq!(responses.len(), 1, "{responses:?}");
    problem(&responses[0], 400);
    assert_eq!(responses[0].header("Connection"), Some("close"));
    assert_eq!(server.get("/api/widgets").text(), "[]");
}

#[test]
fn a_burst_of_keep_alive_connections_is_served_without_any_closing() {
    // tiny_http's own thread pool could leave a new connection unread until
    // another keep-alive connection closed. Here none closes until every
    // one has its answer; a connection left waiting fails the read.
    let server = TestServer::start();
    let mut streams: Vec<_> = (0..64).map(|_| server.connect()).collect();
    for stream in &mut streams {
        stream
            .write_all(b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n")
            .expect("write");
    }
    for stream in &mut streams {
        let responses = read_responses(stream, 1, false);
        assert_eq!(responses[0].status, 200);
    }
    // And again on the same connections, still all open.
    for stream in &mut streams {
        stream
            .write_all(b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n")
            .expect("write");
    }
    for stream in &mut streams {
        assert_eq!(read_responses(stream, 1, false)[0].status, 200);
    }
}

#[test]
fn a_small_body_refused_unread_leaves_the_connection_usable() {
    // tiny_http has read a body this small before the request reaches us,
    // so refusing it (415 here) loses nothing: the next request is served.
    let server = TestServer::start();
    let mut stream = server.connect();
    stream
        .write_all(
            b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello\
              GET /api/todos HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        )
        .expect("write");
    let responses = parse_responses(&read_to_close(&mut stream), false);
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [415, 200]);
}

#[test]
fn a_large_body_refused_unread_closes_the_connection() {
    // A body still arriving when it is refused is discarded by tiny_http
    // only up to the read timeout; the connection then serves nothing more.
    let server = TestServer::start();
    let mut stream = server.connect();
    let body = "x".repeat(2000);
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}\
         GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n",
        body.len()
    );
    stream.write_all(raw.as_bytes()).expect("write");
    let responses = parse_responses(&read_to_close(&mut stream), false);
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [415]);
}

#[test]
fn a_content_length_beyond_64_bits_is_ambiguous_framing() {
    // Finding 1 of round 2: tiny_http cannot parse a length this long and
    // treats the request as bodiless, so the body, here a whole DELETE,
    // would be read as the next request on the connection.
    let server = TestServer::start();
    let id = server.create("/api/todos", r#"{"userId": 1, "title": "keep me"}"#)["id"].clone();
    let hidden = format!("DELETE /api/todos/{id} HTTP/1.1\r\nHost: t\r\n\r\n");
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999999\r\n\r\n{hidden}GET /api/todos/{id} HTTP/1.1\r\nHost: t\r\n\r\n"
    );
    let wire = server.raw(raw.as_bytes());
    let responses = parse_responses(&wire, false);
    assert_eq!(responses.len(), 1, "{}", String::from_utf8_lossy(&wire));
    let body = problem(&responses[0], 400);
    assert!(
        body["detail"].as_str().unwrap().contains("framing"),
        "{body}"
    );
    assert_eq!(responses[0].header("Connection"), Some("close"));
    assert_eq!(server.get(&format!("/api/todos/{id}")).status, 200);
}

#[test]
fn an_upgrade_offer_with_a_body_is_ignored_and_the_request_served() {
    // Finding 7 of round 2: `curl --http2` over plain HTTP offers an upgrade
    // to h2c; RFC 9110 section 7.8 lets a server ignore the offer. tiny_http
    // hands over the raw connection as the body, so the body must end at
    // its Content-Length, not when the client closes or the read times out.
    let server = impatient();
    let body = r#"{"userId": 1, "title": "upgraded"}"#;
    let mut stream = server.connect();
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(raw.as_bytes()).unwrap();
    let started = Instant::now();
    let responses = read_responses(&mut stream, 1, false);
    assert_eq!(responses[0].status, 201, "{responses:?}");
    assert_eq!(responses[0].json()["title"], "upgraded");
    assert!(started.elapsed() < Duration::from_millis(900));
    // tiny_http reads nothing more after an upgrade offer, and says so.
    assert_eq!(responses[0].header("Connection"), Some("close"));

    // A chunked body cannot be framed on the raw connection: 400, at once.
    let raw = "POST /api/todos HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
    let started = Instant::now();
    let responses = parse_responses(&server.raw(raw.as_bytes()), false);
    let body = problem(&responses[0], 400);
    assert!(
        body["hint"].as_str().unwrap().contains("Content-Length"),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(server.get("/api/todos").json().as_array().unwrap().len(), 1);
}
