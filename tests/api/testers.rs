//! For people who test clients: `--allow-reset`, `--delay`/`_delay`,
//! `--auth-token`.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::json;
use widgets_todos::app::{App, Options};
use widgets_todos::config::Secret;
use widgets_todos::store::Store;

use crate::cli::{kill_9, run, spawn_remote, stop_with};
use crate::support::{TempDir, TestServer, parse_responses, problem, read_to_close};

fn with_options(options: Options) -> TestServer {
    TestServer::with_app(App::with_options(Store::new(1000), options))
}

#[test]
fn reset_only_with_the_flag() {
    let plain = TestServer::start();
    plain.create("/api/todos", r#"{"userId": 1, "title": "keep"}"#);
    let refused = plain.delete("/api/todos");
    problem(&refused, 405);
    assert_eq!(refused.header("Allow"), Some("GET, HEAD, POST, OPTIONS"));
    assert_eq!(
        plain.get("/api/todos").json().as_array().map(Vec::len),
        Some(1)
    );

    let server = with_options(Options {
        allow_reset: true,
        ..Options::default()
    });
    for n in 1..=3 {
        server.create(
            "/api/todos",
            &format!(r#"{{"userId": 1, "title": "t{n}"}}"#),
        );
    }
    server.create("/api/widgets", r#"{"price": "1", "quality": "q"}"#);
    let options = server.send("OPTIONS", "/api/todos", &[], b"");
    assert_eq!(
        options.header("Allow"),
        Some("GET, HEAD, POST, DELETE, OPTIONS")
    );
    let reset = server.delete("/api/todos");
    assert_eq!(reset.status, 204);
    assert_eq!(server.get("/api/todos").json(), json!([]));
    // The other collection is untouched, and ids go on where they were.
    assert_eq!(
        server.get("/api/widgets").json().as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "after"}"#)["id"],
        4
    );
    problem(&server.delete("/api/todos?force=1"), 400);
}

#[test]
fn a_reset_is_durable() {
    let dir = TempDir::new("reset");
    let data = dir.join("data.json");
    let data_arg = data.to_str().expect("UTF-8");
    let (child, server) = spawn_remote(&["--port", "0", "--data", data_arg, "--allow-reset"]);
    server.create("/api/todos", r#"{"userId": 1, "title": "a"}"#);
    server.create("/api/todos", r#"{"userId": 1, "title": "b"}"#);
    assert_eq!(server.delete("/api/todos").status, 204);
    kill_9(child);
    let (child, server) = spawn_remote(&["--port", "0", "--data", data_arg]);
    assert_eq!(server.get("/api/todos").json(), json!([]));
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "c"}"#)["id"],
        3
    );
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
}

/// With 2 workers, 100 requests each delayed by 5 s all finish in about
/// 5 s, and an undelayed request meanwhile waits for none of them. The
/// delay is long so that the bounds hold on a loaded machine and under
/// emulation (`scripts/cross.sh`): held workers would take 250 s, and the
/// undelayed request at least 5 s. `scripts/bench.py` measures the real
/// figures.
#[test]
fn delayed_requests_do_not_hold_workers() {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#);
    let started = Instant::now();
    let mut delayed: Vec<_> = (0..100)
        .map(|_| {
            let mut stream = server.connect();
            stream
                .write_all(b"GET /api/todos/1?_delay=5000 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .expect("send");
            stream
        })
        .collect();
    let quick = Instant::now();
    assert_eq!(server.get("/api/todos/1").status, 200);
    let quick = quick.elapsed();
    for stream in &mut delayed {
        let responses = parse_responses(&read_to_close(stream), false);
        assert_eq!(responses.len(), 1);
        assert_eq!(responses[0].status, 200);
    }
    let all = started.elapsed();
    assert!(
        quick < Duration::from_secs(4),
        "undelayed request took {quick:?}"
    );
    assert!(all >= Duration::from_secs(5), "{all:?}");
    assert!(
        all < Duration::from_secs(20),
        "100 delayed requests took {all:?}"
    );
}

#[test]
fn delay_flag_and_parameter() {
    let server = with_options(Options {
        delay: Duration::from_millis(300),
        ..Options::default()
    });
    let timed = |path: &str| {
        let started = Instant::now();
        let status = server.get(path).status;
        (status, started.elapsed())
    };
    let (status, took) = timed("/api/todos");
    assert_eq!(status, 200);
    assert!(took >= Duration::from_millis(300), "{took:?}");
    // `_delay` sets this request's delay, 0 included.
    let (status, took) = timed("/api/todos?_delay=0");
    assert_eq!(status, 200);
    assert!(took < Duration::from_millis(300), "{took:?}");
    // Errors are delayed too; the health check is not under /api.
    let (status, took) = timed("/api/nothing");
    assert_eq!(status, 404);
    assert!(took >= Duration::from_millis(300), "{took:?}");
    let (status, took) = timed("/healthz");
    assert_eq!(status, 200);
    assert!(took < Duration::from_millis(300), "{took:?}");

    let plain = TestServer::start();
    for bad in [
        "_delay=10001",
        "_delay=abc",
        "_delay=-1",
        "_delay=1&_delay=2",
    ] {
        let detail = problem(&plain.get(&format!("/api/todos?{bad}")), 400)["detail"].clone();
        assert!(
            detail.as_str().is_some_and(|d| d.contains("'_delay'")),
            "{bad}: {detail}"
        );
        problem(&plain.get(&format!("/api/todos/1?{bad}")), 400);
    }
    assert_eq!(plain.get("/api?_delay=5").status, 200);
}

#[test]
fn auth_token_guards_the_api() {
    let server = with_options(Options {
        auth_token: Some(Secret::new("let-me-in")),
        ..Options::default()
    });
    let missing = server.get("/api/todos");
    problem(&missing, 401);
    assert_eq!(missing.header("WWW-Authenticate"), Some("Bearer"));
    for wrong in [
        "Authorization: Bearer let-me-out",
        "Authorization: Bearer let-me-in-please",
        "Authorization: Bearer let-me-i",
        "Authorization: Basic bGV0LW1lLWlu",
        "Authorization: let-me-in",
    ] {
        let response = server.send("GET", "/api/todos", &[wrong], b"");
        problem(&response, 401);
        assert_eq!(
            response.header("WWW-Authenticate"),
            Some("Bearer"),
            "{wrong}"
        );
    }
    let good = "Authorization: Bearer let-me-in";
    assert_eq!(server.send("GET", "/api/todos", &[good], b"").status, 200);
    assert_eq!(
        server
            .send(
                "GET",
                "/api/todos",
                &["Authorization: bearer let-me-in"],
                b""
            )
            .status,
        200
    );
    let created = server.send(
        "POST",
        "/api/todos",
        &[good, "Content-Type: application/json"],
        br#"{"userId": 1, "title": "t"}"#,
    );
    assert_eq!(created.status, 201);
    // Unknown /api paths are 401 too: nothing is told without the token.
    problem(&server.get("/api/nothing"), 401);
    // Preflights and the health check need none.
    assert_eq!(server.send("OPTIONS", "/api/todos", &[], b"").status, 204);
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn the_token_is_never_logged() {
    let token = "sup3r-s3cret-t0ken";
    let (child, server) =
        spawn_remote(&["--port", "0", "--log-level", "trace", "--auth-token", token]);
    let line = format!("Authorization: Bearer {token}");
    assert_eq!(server.send("GET", "/api/todos", &[&line], b"").status, 200);
    assert_eq!(server.get("/api/todos").status, 401);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0));
    assert!(log.contains("GET /api/todos"), "{log}");
    assert!(!log.contains(token), "{log}");
    // Nor in the message about a bad one.
    let out = run(&["--auth-token", "bad token"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("bad token"));
}
