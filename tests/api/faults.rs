//! Failure on purpose: `_status`, `_fault=close` and
//! `--fail-rate`, only with `--faults`, and what is never failed.

use std::collections::BTreeSet;
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use widgets_todos::config::Config;
use widgets_todos::config::fault_settings::{Failure, FaultSettings, Rate};

use crate::cli::{check_refused, spawn, stop_with};
use crate::support::{Response, TestServer, config, problem, read_responses, read_to_close};

const TODO: &str = r#"{"userId": 1, "title": "t"}"#;

/// A server with `--faults`, and `--fail-rate`, `--fail-status` and
/// `--seed` as given. Its read timeout is a minute, far beyond the
/// tests' own ten-second reads: a connection that closes before a test's
/// read gives up was closed by the server's choice, not by a timeout.
fn faulty(rate: Option<f64>, status: Option<Failure>, seed: u64) -> TestServer {
    TestServer::with_config(Config {
        faults: FaultSettings {
            on: true,
            rate: rate.map(Rate),
            status,
        },
        seed,
        read_timeout: Duration::from_secs(60),
        ..config()
    })
}

/// The whole store, as the lists show it.
fn everything(server: &TestServer) -> (String, String) {
    (
        server.get("/api/todos").text(),
        server.get("/api/widgets").text(),
    )
}

/// The problem document of a failure on purpose, with what every response
/// carries (the request id, checked by `problem`; CORS, when asked by
/// `Origin`).
fn failed(response: &Response, status: u16) -> serde_json::Value {
    let body = problem(response, status);
    assert!(
        body["detail"].as_str().unwrap().contains("on purpose"),
        "{body}"
    );
    assert_eq!(response.header("Vary"), Some("Origin"));
    body
}

#[test]
fn status_answers_with_that_status_and_changes_nothing() {
    let server = faulty(None, None, 0);
    server.create("/api/todos", TODO);
    server.create("/api/widgets", r#"{"price": "$1", "quality": "good"}"#);
    let before = everything(&server);
    let todo = ["Content-Type: application/json"];
    let requests: [(&str, &str, &[&str], &str); 7] = [
        ("GET", "/api/todos", &[], ""),
        ("GET", "/api/todos/1", &[], ""),
        ("POST", "/api/todos", &todo, TODO),
        ("PUT", "/api/todos/1", &todo, r#"{"title": "changed"}"#),
        ("PATCH", "/api/todos/1", &todo, r#"{"completed": true}"#),
        ("DELETE", "/api/todos/1", &[], ""),
        ("DELETE", "/api/widgets/1", &[], ""),
    ];
    for (method, path, headers, body) in requests {
        let target = format!("{path}?_status=503");
        let headers = [headers, &["Origin: http://localhost:3000"]].concat();
        let response = server.send(method, &target, &headers, body.as_bytes());
        let body = failed(&response, 503);
        assert_eq!(body["title"], "Service Unavailable");
        assert_eq!(response.header("Retry-After"), Some("1"), "{method}");
        let exposed = response.header("Access-Control-Expose-Headers").unwrap();
        assert!(exposed.ends_with("X-Request-Id, Retry-After"), "{exposed}");
        assert_eq!(everything(&server), before, "{method} {target}");
    }
    // The next id was not taken by the failed POST.
    assert_eq!(server.create("/api/todos", TODO)["id"], 2);
}

#[test]
fn each_status_gets_its_title_and_the_fields_http_asks_of_it() {
    let server = faulty(None, None, 0);
    let cases = [
        (400, "Bad Request", None),
        (401, "Unauthorized", Some(("WWW-Authenticate", "Bearer"))),
        (409, "Conflict", None),
        (429, "Too Many Requests", Some(("Retry-After", "1"))),
        (500, "Internal Server Error", None),
        (502, "Bad Gateway", None),
        (504, "Gateway Timeout", None),
    ];
    for (status, title, field) in cases {
        let response = server.get(&format!("/api/widgets?_status={status}"));
        let body = failed(&response, status);
        assert_eq!(body["title"], title);
        assert_eq!(response.header("Retry-After").is_some(), status == 429);
        if let Some((name, value)) = field {
            assert_eq!(response.header(name), Some(value), "{status}");
        }
    }
    // HEAD: the head of the same response, without its body.
    let head = server.send("HEAD", "/api/todos/7?_status=503", &[], b"");
    assert_eq!(head.status, 503);
    assert!(head.body.is_empty());
    assert_eq!(head.header("Retry-After"), Some("1"));
    // A 408 closes the connection, as a real one does.
    let timeout = server.get("/api/todos?_status=408");
    assert_eq!(timeout.header("Connection"), Some("close"));
}

#[test]
fn bad_status_and_fault_values_are_400_naming_the_parameter() {
    let server = faulty(None, None, 0);
    let cases = [
        ("_status=abc", "_status"),
        ("_status=200", "_status"),
        ("_status=600", "_status"),
        ("_status=499", "_status"),
        ("_status=405", "_status"),
        ("_status=", "_status"),
        ("_status=503&_status=503", "given more than once"),
        ("_fault=reset", "_fault"),
        ("_fault=close&_fault=close", "given more than once"),
        ("_status=503&_fault=close", "not both"),
    ];
    for (query, said) in cases {
        for path in ["/api/todos", "/api/todos/1"] {
            let response = server.get(&format!("{path}?{query}"));
            let body = problem(&response, 400);
            let detail = body["detail"].as_str().unwrap();
            assert!(detail.contains(said), "{query}: {detail}");
        }
    }
    let range = problem(&server.get("/api/todos?_status=200"), 400);
    assert!(
        range["detail"].as_str().unwrap().contains("400 to 599"),
        "{range}"
    );
    // Other parameters keep their answers.
    let unknown = problem(&server.get("/api/todos/1?bogus=1"), 400);
    assert!(unknown["detail"].as_str().unwrap().contains("'bogus'"));
}

#[test]
fn without_faults_status_and_fault_are_400_saying_how_to_turn_them_on() {
    let server = TestServer::start();
    server.create("/api/todos", TODO);
    let before = everything(&server);
    for target in [
        "/api/todos?_status=503",
        "/api/todos/1?_status=503",
        "/api/widgets?_fault=close",
        "/api/widgets/1?_fault=close",
    ] {
        for method in ["GET", "DELETE"] {
            let body = problem(&server.send(method, target, &[], b""), 400);
            assert!(
                body["detail"].as_str().unwrap().contains("on purpose"),
                "{body}"
            );
            assert_eq!(
                body["hint"], "start the server with --faults (or FAULTS=1)",
                "{target}"
            );
        }
    }
    assert_eq!(everything(&server), before);
    // Other unknown parameters are answered as before.
    let list = problem(&server.get("/api/todos?bogus=1"), 400);
    assert!(
        list["detail"]
            .as_str()
            .unwrap()
            .starts_with("unknown query parameter 'bogus'"),
        "{list}"
    );
    let item = problem(&server.get("/api/todos/1?bogus=1"), 400);
    assert_eq!(
        item["detail"],
        "unknown query parameter 'bogus': this path takes no query parameters"
    );
}

/// A raw request on a new keep-alive connection (the server's choice
/// alone can close it) and everything read until the connection ends.
fn until_closed(server: &TestServer, bytes: &[u8]) -> Vec<u8> {
    let mut stream = server.connect();
    stream.write_all(bytes).unwrap();
    read_to_close(&mut stream)
}

#[test]
fn fault_close_ends_the_connection_without_a_byte() {
    let server = faulty(None, None, 0);
    server.create("/api/todos", TODO);
    let before = everything(&server);
    let get = b"GET /api/todos?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n";
    assert_eq!(until_closed(&server, get), b"");
    let delete = b"DELETE /api/todos/1?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n";
    assert_eq!(until_closed(&server, delete), b"");
    let post = format!(
        "POST /api/todos?_fault=close HTTP/1.1\r\nHost: t\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{TODO}",
        TODO.len()
    );
    assert_eq!(until_closed(&server, post.as_bytes()), b"");
    // Pipelined behind it: dropped unanswered with it.
    let pipelined = b"GET /api/todos?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n\
                      GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n";
    assert_eq!(until_closed(&server, pipelined), b"");
    assert_eq!(everything(&server), before);
    // The server serves on, new connections and old.
    assert_eq!(server.get("/api/todos/1").status, 200);
}

#[test]
fn keep_alive_connections_work_as_usual_with_faults_on() {
    let server = faulty(None, None, 0);
    let mut stream = server.connect();
    for _ in 0..3 {
        stream
            .write_all(b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let response = read_responses(&mut stream, 1, false);
        assert_eq!(response[0].status, 200);
    }
    // Pipelined: answered in order.
    let three = "GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n".repeat(3);
    stream.write_all(three.as_bytes()).unwrap();
    let responses = read_responses(&mut stream, 3, false);
    assert!(responses.iter().all(|r| r.status == 200), "{responses:?}");
    // Then a fault on the same connection closes it.
    stream
        .write_all(b"GET /api/todos/1?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    assert_eq!(read_to_close(&mut stream), b"");
}

/// The indexes of the requests that failed, out of `count` sent one at a
/// time on one connection: lists, creates and reads in turn.
fn failures(server: &TestServer, count: usize) -> BTreeSet<usize> {
    let mut stream = server.connect();
    let mut failing = BTreeSet::new();
    for n in 0..count {
        let request = match n % 3 {
            0 => "GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n".to_string(),
            1 => format!(
                "POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{TODO}",
                TODO.len()
            ),
            _ => "GET /api/todos/1 HTTP/1.1\r\nHost: t\r\n\r\n".to_string(),
        };
        stream.write_all(request.as_bytes()).unwrap();
        let response = read_responses(&mut stream, 1, false).remove(0);
        match response.status {
            503 => {
                failed(&response, 503);
                failing.insert(n);
            }
            200 | 201 | 404 => {}
            other => panic!("request {n}: {other} {}", response.text()),
        }
    }
    failing
}

#[test]
fn the_same_seed_fails_the_same_requests() {
    let first = failures(&faulty(Some(0.2), None, 7), 1000);
    let second = failures(&faulty(Some(0.2), None, 7), 1000);
    assert_eq!(first, second);
    assert!((120..=280).contains(&first.len()), "{}", first.len());
    let other = failures(&faulty(Some(0.2), None, 8), 1000);
    assert_ne!(first, other);
    assert!((120..=280).contains(&other.len()), "{}", other.len());
}

#[test]
fn a_rate_of_one_fails_only_collections_and_items() {
    let server = faulty(Some(1.0), Some(Failure::Status(500)), 0);
    for path in ["/", "/api", "/healthz", "/api/openapi.json"] {
        assert_eq!(server.get(path).status, 200, "{path}");
    }
    for path in ["/api/todos", "/api/widgets/1", "/api/todos/abc"] {
        let response = server.get(path);
        failed(&response, 500);
        assert_eq!(response.header("Retry-After"), None);
    }
    // A request's own _status wins over the rate.
    failed(&server.get("/api/todos?_status=429"), 429);
    // A CORS preflight is answered, so the browser lets its script see the
    // failure of the request itself.
    let preflight = server.preflight("/api/todos?_status=503", "POST");
    assert_eq!(preflight.status, 204);
    // A rate of zero fails nothing.
    let none = faulty(Some(0.0), None, 0);
    assert!(failures(&none, 60).is_empty());
}

#[test]
fn a_fail_status_of_close_drops_the_connections() {
    let server = faulty(Some(1.0), Some(Failure::Close), 0);
    let get = b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n";
    assert_eq!(until_closed(&server, get), b"");
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn the_access_log_shows_failures_and_the_summary_the_mode() {
    let args = ["--port", "0", "--faults", "--fail-rate", "0", "--seed", "7"];
    let (child, addr) = spawn(&args, &[]);
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /api/todos?_fault=close HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    assert_eq!(read_to_close(&mut stream), b"");
    let failed = crate::cli::get(&addr, "/api/todos?_status=503");
    assert!(failed.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("faults on (_status, _fault)"), "{log}");
    assert!(
        log.contains(" GET /api/todos?_fault=close 444 head+body=0B "),
        "{log}"
    );
    assert!(log.contains(" GET /api/todos?_status=503 503 "), "{log}");
}

#[test]
fn bad_fault_settings_exit_2_saying_the_fix() {
    let share = "a share of requests from 0 to 1";
    for rate in ["-1", "1.5", "x", ""] {
        check_refused(
            &["--faults", "--fail-rate", rate],
            &[],
            &["--fail-rate", share],
        );
    }
    check_refused(&["--faults"], &[("FAIL_RATE", "2")], &["FAIL_RATE", share]);
    let statuses = "close, or a status HTTP defines from 400 to 599";
    for status in ["200", "abc", "600", "405"] {
        check_refused(
            &["--faults", "--fail-status", status],
            &[],
            &["--fail-status", statuses],
        );
    }
    let needs = "--faults (or FAULTS=1) as well";
    check_refused(&["--fail-rate", "0.2"], &[], &["--fail-rate", needs]);
    check_refused(&["--fail-status", "500"], &[], &["--fail-status", needs]);
    check_refused(&[], &[("FAIL_RATE", "0.2")], &["FAIL_RATE", needs]);
    let words = "1, true or yes";
    check_refused(&[], &[("FAULTS", "")], &["FAULTS", words]);
    check_refused(&["--faults=1"], &[], &["--faults", "takes no value"]);
}
