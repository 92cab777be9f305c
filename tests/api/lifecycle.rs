//! Panics, poisoned locks, concurrency and shutdown, on a live server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use widgets_todos::http::Request;
use widgets_todos::http::Response;
use widgets_todos::model::Todo;

use crate::support::{TestServer, problem};

#[test]
fn a_panicking_handler_gives_500_and_the_worker_lives_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let server = TestServer::with_handler(Arc::new(move |req: &mut Request<'_>| {
        counter.fetch_add(1, Ordering::SeqCst);
        if req.path() == "/boom" {
            panic!("secret internal detail");
        }
        Response::json(200, &"fine")
    }));
    // More panics than workers: if one killed its worker, later requests would hang.
    for _ in 0..10 {
        let response = server.get("/boom");
        let body = problem(&response, 500);
        assert!(!response.text().contains("secret"), "{body}");
    }
    assert_eq!(server.get("/ok").text(), "\"fine\"");
    assert_eq!(calls.load(Ordering::SeqCst), 11);
}

#[test]
fn a_poisoned_store_lock_does_not_stop_the_server() {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#);
    let poisoned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = server
            .store()
            .update::<Todo>(1, |_| Ok(()), |_| panic!("poison the lock"));
    }));
    assert!(poisoned.is_err());
    assert_eq!(server.get("/api/todos/1").json()["title"], "t");
    assert_eq!(
        server
            .json("PUT", "/api/todos/1", r#"{"title": "u"}"#)
            .status,
        200
    );
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#)["id"],
        2
    );
}

#[test]
fn concurrent_creates_get_distinct_ids() {
    let server = Arc::new(TestServer::start());
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let server = Arc::clone(&server);
            thread::spawn(move || {
                (0..25)
                    .map(|_| {
                        server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#)["id"]
                            .as_u64()
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=200).collect::<Vec<_>>());
    assert_eq!(
        server.get("/api/todos").json().as_array().unwrap().len(),
        200
    );
}

#[test]
fn concurrent_updates_are_never_half_seen() {
    let server = Arc::new(TestServer::start());
    server.create("/api/widgets", r#"{"price": "0", "quality": "0"}"#);
    let writer = {
        let server = Arc::clone(&server);
        thread::spawn(move || {
            for n in 1..=100 {
                let body = format!(r#"{{"price": "{n}", "quality": "{n}"}}"#);
                assert_eq!(server.json("PUT", "/api/widgets/1", &body).status, 200);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !writer.is_finished() && Instant::now() < deadline {
        let item = server.get("/api/widgets/1").json();
        assert_eq!(
            item["price"], item["quality"],
            "half an update seen: {item}"
        );
    }
    writer.join().unwrap();
    assert_eq!(server.get("/api/widgets/1").json()["price"], "100");
}

#[test]
fn stop_refuses_new_connections_and_wait_returns() {
    let server = TestServer::start();
    assert_eq!(server.get("/api").status, 200);
    let addr = server.addr;
    let started = Instant::now();
    drop(server); // stop() then wait()
    assert!(started.elapsed() < Duration::from_secs(5));
    // The listener is closed: connecting fails or the connection is never served.
    if let Ok(mut stream) = std::net::TcpStream::connect(addr) {
        use std::io::{Read, Write};
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let _ = stream.write_all(b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n");
        let mut buf = [0u8; 64];
        let n = stream.read(&mut buf).unwrap_or(0);
        assert_eq!(
            n,
            0,
            "served after stop: {}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
}
