//! Hostile framing: what the transport does after a
//! body it did not read (L1), and the framing and host rules of RFC 9112
//! it enforces, or the library's bound where it cannot (L7). Raw bytes on
//! a socket, so the status line and every field are visible.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::support::{TestServer, config, parse_responses, problem, read_to_close};

/// The status line of the first response on the wire.
fn status_line(wire: &[u8]) -> String {
    let text = String::from_utf8_lossy(wire);
    text.lines().next().unwrap_or("").to_string()
}

/// Sends `raw` on one connection, a pipelined `GET /api/todos` behind it,
/// and reads until the server closes: every response it sent.
fn pipelined(server: &TestServer, raw: &[u8]) -> Vec<crate::support::Response> {
    let mut stream = server.connect();
    stream.write_all(raw).unwrap();
    stream
        .write_all(b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    parse_responses(&read_to_close(&mut stream), false)
}

#[test]
fn a_body_refused_unread_closes_the_connection_and_says_so() {
    let server = TestServer::start();
    let id = server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#)["id"].clone();
    let body = "x".repeat(2000);
    let cases = [
        // 415: a 2 KB body the handler never reads.
        format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        // 404: a path that names no item (an id is digits), whatever the
        // body. (A PUT to a well-formed id reads its body first: a body in
        // error then asks whether the item is there.)
        format!(
            "PUT /api/todos/x9 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        // 413 decided from Content-Length, the body sent all the same.
        format!(
            "PATCH /api/todos/{id} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{}",
            "y".repeat(70000)
        ),
        // 415 on a chunked body.
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".to_string(),
    ];
    // A body with a Content-Length is answered at once, in the library's
    // encoding, which strips `Connection`; a chunked one, once read, in
    // ours.
    for (raw, (status, reason, connection)) in cases.iter().zip([
        (415, "Unsupported Media Type", None),
        (404, "Not Found", None),
        (413, "Content Too Large", None),
        (415, "Unsupported Media Type", Some("close")),
    ]) {
        let responses = pipelined(&server, raw.as_bytes());
        // The request behind it is neither served nor answered by the
        // library's bare 400: the connection ends after the refusal.
        assert_eq!(responses.len(), 1, "{raw:.60}: {responses:?}");
        problem(&responses[0], status);
        assert_eq!(responses[0].header("Connection"), connection, "{raw:.60}");
        let wire = String::from_utf8_lossy(&responses[0].body).to_string();
        assert!(wire.contains(&format!("\"title\":\"{reason}\"")), "{wire}");
    }
    let raw = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let wire = server.raw(raw.as_bytes());
    assert_eq!(status_line(&wire), "HTTP/1.1 415 Unsupported Media Type");
    let wire = server.raw(
        format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{}",
            "y".repeat(70000)
        )
        .as_bytes(),
    );
    assert_eq!(status_line(&wire), "HTTP/1.1 413 Payload Too Large");
    assert_eq!(server.get("/api/todos").json().as_array().unwrap().len(), 1);
}

#[test]
fn a_refused_body_the_client_waits_to_send_gets_the_librarys_encoding_then_a_close() {
    // The bound: a client that sent `Expect:
    // 100-continue` waits before sending the body, so the response goes
    // out through the HTTP library, which writes it before it reads the
    // body's end: its reason phrase, and no Connection field (it strips
    // it). The connection still closes after it.
    let server = TestServer::start();
    let mut stream = server.connect();
    stream
        .write_all(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 70000\r\nExpect: 100-continue\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    let seen = crate::support::read_head(&mut stream, "a response");
    assert_eq!(status_line(&seen), "HTTP/1.1 413 Payload Too Large");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The client gives up on sending; the server closes.
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    read_to_close(&mut stream);
    assert_eq!(server.get("/api/todos").text(), "[]");
}

#[test]
fn a_transfer_coding_other_than_chunked_is_501_and_nothing_is_created() {
    let server = TestServer::start();
    for coding in ["gzip, chunked", "deflate, chunked", "compress, chunked"] {
        let raw = format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: {coding}\r\n\r\n1b\r\n{{\"userId\": 1, \"title\": \"x\"}}\r\n0\r\n\r\n"
        );
        let responses = parse_responses(&server.raw(raw.as_bytes()), false);
        let body = problem(&responses[0], 501);
        assert!(body["detail"].as_str().unwrap().contains(coding), "{body}");
        assert_eq!(responses[0].header("Connection"), Some("close"));
    }
    assert_eq!(server.get("/api/todos").text(), "[]");
}

#[test]
fn http_11_without_host_or_with_two_is_400() {
    // RFC 9112 section 3.2.
    let server = TestServer::start();
    let wire = server.raw(b"GET /api HTTP/1.1\r\n\r\n");
    let body = problem(&parse_responses(&wire, false)[0], 400);
    assert!(body["detail"].as_str().unwrap().contains("Host"), "{body}");
    let wire = server.raw(b"GET /api HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    let body = problem(&parse_responses(&wire, false)[0], 400);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("more than one Host"),
        "{body}"
    );
    let wire = server.raw(
        b"POST /api/todos HTTP/1.1\r\nHost: a\r\nhost: b\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"userId\": 1, \"title\": \"x\"}",
    );
    problem(&parse_responses(&wire, false)[0], 400);
    assert_eq!(server.get("/api/todos").text(), "[]");
    // HTTP/1.0 needs no Host; one Host is fine.
    let wire = server.raw(b"GET /api HTTP/1.0\r\n\r\n");
    assert_eq!(status_line(&wire), "HTTP/1.1 200 OK");
}

#[test]
fn what_the_library_refuses_before_the_server_sees_it() {
    // The bound: tiny_http matches `chunked` with its
    // case and takes no trailer fields, and answers both itself with a
    // bare 400 before the request reaches this server's code; then the
    // connection ends. nginx in front accepts both (README: the library's
    // defects, and the proxy that fixes them).
    let server = TestServer::start();
    for raw in [
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n1b\r\n{\"userId\": 1, \"title\": \"x\"}\r\n0\r\n\r\n",
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1b\r\n{\"userId\": 1, \"title\": \"x\"}\r\n0\r\nX-Trailer: 1\r\n\r\n",
    ] {
        let wire = server.raw(raw.as_bytes());
        let responses = parse_responses(&wire, false);
        assert!(
            responses.iter().all(|r| r.status == 400 || r.status == 201),
            "{responses:?}"
        );
        assert!(
            responses.iter().any(|r| r.status == 400),
            "{}",
            String::from_utf8_lossy(&wire)
        );
    }
    // The server lives on.
    assert_eq!(server.get("/api").status, 200);
}

#[test]
fn expect_100_continue_on_http_10_is_answered_by_the_library() {
    // The bound: RFC 9110 section 10.1.1 says a server
    // ignores `Expect: 100-continue` from an HTTP/1.0 client, but tiny_http
    // sends `100 Continue` when the body is first read, and there is no
    // other way to read it. The final response follows it, whole.
    let server = TestServer::start();
    let body = r#"{"userId": 1, "title": "old"}"#;
    let raw = format!(
        "POST /api/todos HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n{body}",
        body.len()
    );
    let wire = server.raw(raw.as_bytes());
    let text = String::from_utf8_lossy(&wire);
    assert!(text.starts_with("HTTP/1.0 100 Continue\r\n"), "{text}");
    assert!(text.contains("201 Created"), "{text}");
}

#[test]
fn slow_uploads_do_not_hold_the_threads() {
    // A request whose body is still arriving waits on its client: it takes
    // no turn of --threads, so two slow uploads with --threads 1 leave
    // every other request served.
    let mut config = config();
    config.threads = 1;
    let server = TestServer::with_config(config);
    let mut uploads = Vec::new();
    for _ in 0..2 {
        let mut stream = server.connect();
        stream
            .write_all(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{\"userId\": 1,")
            .unwrap();
        uploads.push(stream);
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        assert_eq!(server.get("/api/todos").status, 200);
    }
}

#[test]
fn a_refused_body_is_answered_on_its_head_then_drained() {
    // A body refused from its Content-Length (413) waited
    // for the body, or the read timeout, before its answer. It is answered
    // at once, then the rest is read and dropped, and the connection
    // closes.
    let mut config = config();
    config.max_body_bytes = 1024;
    config.read_timeout = Duration::from_secs(10);
    let server = TestServer::with_config(config);
    let mut stream = server.connect();
    stream
        .write_all(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 102400\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    let seen = crate::support::read_head(&mut stream, "a response");
    assert!(status_line(&seen).starts_with("HTTP/1.1 413"), "{seen:?}");
    // The figure (within 100 ms) is scripts/abuse.py's; generous here.
    assert!(started.elapsed() < Duration::from_secs(5));
    stream.write_all(&[b' '; 102400]).unwrap();
    stream
        .write_all(b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let rest = read_to_close(&mut stream);
    assert!(!String::from_utf8_lossy(&rest).contains("HTTP/1.1 200"));
}

#[test]
fn a_body_refused_unread_holds_one_thread_per_connection() {
    // Each connection whose body was refused unread held
    // two threads (its own, and one the library wrote the answer on).
    let (child, server) = crate::cli::spawn_remote(&["--port", "0"]);
    let threads = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
        line[8..].trim().parse::<usize>().unwrap()
    };
    let before = threads();
    let body = "x".repeat(2000);
    let mut streams: Vec<_> = (0..20)
        .map(|_| {
            let mut stream = server.connect();
            let head = "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 2000000\r\n\r\n";
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
            stream
        })
        .collect();
    for stream in &mut streams {
        let seen = crate::support::read_head(stream, "a response");
        assert!(status_line(&seen).starts_with("HTTP/1.1 413"), "{seen:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    let during = threads();
    crate::cli::kill_9(child);
    assert!(during <= before + 20 + 2, "{before} threads, then {during}");
}

#[test]
fn the_answer_to_head_has_no_content_when_its_body_was_left_unread() {
    // RFC 9110 section 9.3.2: a response to HEAD carries no content, also
    // when the request's chunked body, which the handler did not read,
    // makes the connection close after it (our own encoding, after the
    // body is read to its end).
    let server = TestServer::start();
    let chunk = "x".repeat(2000);
    let raw = format!(
        "HEAD /api HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        chunk.len()
    );
    let wire = server.raw(raw.as_bytes());
    let text = String::from_utf8_lossy(&wire);
    let (head, content) = text.split_once("\r\n\r\n").expect("a response head");
    assert_eq!(status_line(head.as_bytes()), "HTTP/1.1 200 OK");
    assert!(head.contains("\r\nConnection: close"), "{head}");
    assert_eq!(content, "", "no content after the head of a HEAD");
}
