//! Raw bytes on a `TcpStream`: keep-alive, pipelining, HTTP/1.0,
//! `Expect: 100-continue`, chunked bodies and malformed requests.

use std::io::Write;

use crate::support::{TestServer, parse_responses, read_responses, read_to_close};

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let server = TestServer::start();
    let mut stream = server.connect();
    for n in 1..=5u64 {
        let body = format!(r#"{{"userId": {n}, "title": "t{n}"}}"#);
        let request = format!(
            "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let response = read_responses(&mut stream, 1, false).remove(0);
        assert_eq!(response.status, 201);
        assert_eq!(response.json()["id"], n);
        assert_eq!(response.header("Connection"), None);
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start();
    let mut stream = server.connect();
    let body = r#"{"price": "$1", "quality": "q"}"#;
    let mut batch = String::new();
    for _ in 0..3 {
        batch.push_str(&format!(
            "POST /api/widgets HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
    }
    batch.push_str("GET /api/widgets/2 HTTP/1.1\r\nHost: t\r\n\r\n");
    batch.push_str("GET /api/nothing HTTP/1.1\r\nHost: t\r\n\r\n");
    batch.push_str("DELETE /api/widgets/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    stream.write_all(batch.as_bytes()).unwrap();
    let wire = read_to_close(&mut stream);
    let responses = parse_responses(&wire, false);
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [201, 201, 201, 200, 404, 200]);
    let ids: Vec<_> = responses[..3]
        .iter()
        .map(|r| r.json()["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(responses[3].json()["id"], 2);
    assert_eq!(responses[5].header("Connection"), Some("close"));
}

#[test]
fn http_1_0_closes_unless_keep_alive_is_asked() {
    let server = TestServer::start();
    let wire = server.raw(b"GET /api HTTP/1.0\r\n\r\n");
    let response = parse_responses(&wire, false).remove(0);
    assert_eq!(response.status, 200);
    assert_eq!(response.header("Connection"), Some("close"));
    assert_eq!(
        response.header("Content-Length"),
        Some(response.body.len().to_string().as_str())
    );

    let mut stream = server.connect();
    stream
        .write_all(b"GET /api HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let first = read_responses(&mut stream, 1, false).remove(0);
    assert_eq!(first.header("Connection"), Some("keep-alive"));
    stream
        .write_all(b"GET /api/todos HTTP/1.0\r\n\r\n")
        .unwrap();
    let second = parse_responses(&read_to_close(&mut stream), false).remove(0);
    assert_eq!(second.text(), "[]");
}

#[test]
fn expect_100_continue_invites_the_body() {
    let server = TestServer::start();
    let mut stream = server.connect();
    let body = r#"{"userId": 1, "title": "t"}"#;
    let head = format!(
        "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut seen = crate::support::read_head(&mut stream, "100 Continue");
    assert!(
        seen.starts_with(b"HTTP/1.1 100 Continue\r\n"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    stream.write_all(body.as_bytes()).unwrap();
    let rest = read_to_close(&mut stream);
    seen.extend_from_slice(&rest);
    let responses = parse_responses(&seen, false);
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].status, 201);
}

#[test]
fn expect_100_continue_not_sent_when_refused_early() {
    let server = TestServer::start();
    let wire = server.raw(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    let text = String::from_utf8_lossy(&wire);
    assert!(text.starts_with("HTTP/1.1 415"), "{text}");
}

#[test]
fn chunked_request_bodies_are_decoded() {
    let server = TestServer::start();
    let request = b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
        a\r\n{\"userId\":\r\n\
        10\r\n 2, \"title\": \"ch\r\n\
        6\r\nunked\"\r\n\
        1\r\n}\r\n\
        0\r\n\r\n";
    let response = parse_responses(&server.raw(request), false).remove(0);
    assert_eq!(response.status, 201, "{}", response.text());
    assert_eq!(response.json()["title"], "chunked");
    assert_eq!(response.json()["userId"], 2);
}

#[test]
fn garbage_request_line_gets_400_and_server_lives_on() {
    let server = TestServer::start();
    for garbage in [
        &b"HELLO\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"\x00\x01\x02\r\n\r\n",
        b"GET /api HTTP/1.1\nHost: x\n\n",
    ] {
        let wire = server.raw(garbage);
        assert!(
            wire.starts_with(b"HTTP/1.1 400"),
            "{garbage:?}: {}",
            String::from_utf8_lossy(&wire)
        );
    }
    assert_eq!(server.get("/api").status, 200);
}

#[test]
fn absolute_form_target_is_routed_by_its_path() {
    let server = TestServer::start();
    let wire = server.raw(
        b"GET http://localhost/api/todos HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(parse_responses(&wire, false)[0].status, 200);
}

#[test]
fn status_line_and_date() {
    let server = TestServer::start();
    let response = server.get("/api");
    assert_eq!(response.version, "HTTP/1.1");
    let date = response.header("Date").unwrap();
    assert!(date.ends_with(" GMT") && date.len() == 29, "{date}");
}
