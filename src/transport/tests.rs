//! The transport's connection handling, driven by fake requests instead of
//! tiny_http's: no sockets, so each test says exactly what a client sent
//! and sees exactly what the server wrote back, in what order.

use std::io::{self, Read};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::capacity::Capacity;
use super::connection::Connection;
use super::library::Incoming;
use super::workers::Workers;
use super::{Handler, lock};
use crate::error::ApiError;
use crate::http::Request;
use crate::http::Response;

/// What happened to each fake request, in the order it happened.
type Log = Arc<Mutex<Vec<(usize, Outcome)>>>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Answered with this status line.
    Sent(String),
    /// Answered before its unread body was discarded.
    SentBeforeDiscarding(u16),
    /// Dropped unanswered.
    Discarded,
}

/// A request as a test's client sends it.
struct Fake {
    id: usize,
    method: &'static str,
    target: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Box<dyn Read + Send>,
    log: Log,
}

impl Fake {
    fn new(log: &Log, id: usize, method: &'static str, target: &'static str) -> Fake {
        Fake {
            id,
            method,
            target,
            headers: Vec::new(),
            body: Box::new(io::empty()),
            log: Arc::clone(log),
        }
    }

    /// With a body of `length` bytes read from `body`.
    fn with_body(
        mut self,
        content_type: &str,
        length: usize,
        body: impl Read + Send + 'static,
    ) -> Fake {
        self.headers.push(("Content-Type", content_type.into()));
        self.headers.push(("Content-Length", length.to_string()));
        self.body = Box::new(body);
        self
    }

    fn record(&self, outcome: Outcome) {
        lock(&self.log).push((self.id, outcome));
    }
}

impl Incoming for Fake {
    fn method(&self) -> &str {
        self.method
    }
    fn target(&self) -> &str {
        self.target
    }
    fn http_10(&self) -> bool {
        false
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
    fn repeats(&self, name: &str) -> bool {
        let named = |(field, _): &&(&str, String)| field.eq_ignore_ascii_case(name);
        self.headers.iter().filter(named).count() > 1
    }
    fn body_length(&self) -> Option<u64> {
        self.header("Content-Length")?.parse().ok()
    }
    fn remote_addr(&self) -> Option<SocketAddr> {
        None
    }
    fn body(&mut self) -> &mut dyn Read {
        &mut self.body
    }
    fn send(self, bytes: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        let status_line = text.lines().next().unwrap_or_default().to_string();
        self.record(Outcome::Sent(status_line));
        Ok(())
    }
    fn send_before_discarding_body(self, reply: &Response, _date: &str) -> io::Result<()> {
        self.record(Outcome::SentBeforeDiscarding(reply.status));
        Ok(())
    }
    fn discard(self) {
        self.record(Outcome::Discarded);
    }
}

/// A body that gives one byte every `pause`.
struct Trickle {
    pause: Duration,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        std::thread::sleep(self.pause);
        match buf.first_mut() {
            Some(byte) => {
                *byte = b' ';
                Ok(1)
            }
            None => Ok(0),
        }
    }
}

/// A handler for the tests: `/panic` panics, `/slow` takes 50 ms, `/close`
/// leaves the request unanswered, a POST reads its body's fields; each
/// answers with its path's status.
fn handler() -> Arc<dyn Handler> {
    Arc::new(|req: &mut Request<'_>| match req.target {
        "/panic" => panic!("on purpose"),
        "/close" => {
            let mut closed = Response::empty(444);
            closed.unanswered = true;
            closed
        }
        "/slow" => {
            std::thread::sleep(Duration::from_millis(50));
            Response::empty(204)
        }
        _ if req.method_name == "POST" => match req.fields(false, "{}") {
            Ok(_) => Response::empty(201),
            Err(err) => Response::from(err),
        },
        _ => Response::empty(204),
    })
}

/// Reads `requests` as one connection's thread would, served by two
/// workers with a 300 ms read timeout; returns what became of each, once
/// every response is sent.
fn serve(requests: Vec<Fake>, log: &Log) -> Vec<(usize, Outcome)> {
    serve_with(requests, log, false).0
}

/// [`serve`], the connection waiting for every verdict or not; also says
/// how many requests the connection's thread read.
fn serve_with(
    requests: Vec<Fake>,
    log: &Log,
    every_verdict: bool,
) -> (Vec<(usize, Outcome)>, usize) {
    let workers = Arc::new(Workers::new(handler(), 4096, Duration::from_millis(300)));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let workers = Arc::clone(&workers);
            std::thread::spawn(move || workers.work())
        })
        .collect();
    let capacity = Arc::new(Capacity::new(4));
    let conn = Arc::new(Connection::new(false, capacity.take(), every_verdict));
    let read = AtomicUsize::new(0);
    let requests = requests.into_iter().inspect(|_| {
        read.fetch_add(1, Ordering::SeqCst);
    });
    workers.read(conn, requests.map(Ok::<Fake, ApiError>));
    assert!(
        capacity.wait_until_empty(Instant::now() + Duration::from_secs(5)),
        "a response was never sent"
    );
    workers.finish();
    for thread in threads {
        thread.join().unwrap();
    }
    (lock(log).clone(), read.load(Ordering::SeqCst))
}

fn sent(status: &str) -> Outcome {
    Outcome::Sent(format!("HTTP/1.1 {status}"))
}

#[test]
fn pipelined_requests_are_served_one_at_a_time_in_order() {
    let log = Log::default();
    let requests = (0..4)
        .map(|id| Fake::new(&log, id, "GET", "/slow"))
        .collect();
    let outcomes = serve(requests, &log);
    let expected: Vec<_> = (0..4).map(|id| (id, sent("204 No Content"))).collect();
    assert_eq!(outcomes, expected);
}

#[test]
fn a_body_that_stops_arriving_gets_408_and_closes_the_connection() {
    let log = Log::default();
    let trickle = Trickle {
        pause: Duration::from_millis(100),
    };
    let requests = vec![
        Fake::new(&log, 0, "POST", "/api/todos").with_body("application/json", 2000, trickle),
        Fake::new(&log, 1, "GET", "/api"),
    ];
    let mut outcomes = serve(requests, &log);
    // The rest of the body may never come: the 408 goes out before it is
    // discarded, and what follows is not taken for a request. (That 408
    // is sent from a thread of its own, so only each request's fate is
    // certain, not the order in the log.)
    outcomes.sort_by_key(|(id, _)| *id);
    assert_eq!(
        outcomes,
        [
            (0, Outcome::SentBeforeDiscarding(408)),
            (1, Outcome::Discarded)
        ]
    );
}

#[test]
fn a_body_refused_unread_closes_the_connection() {
    let log = Log::default();
    let requests = vec![
        Fake::new(&log, 0, "POST", "/api/todos").with_body("text/plain", 2000, io::repeat(b'x')),
        Fake::new(&log, 1, "GET", "/api"),
    ];
    let mut outcomes = serve(requests, &log);
    outcomes.sort_by_key(|(id, _)| *id);
    assert_eq!(
        outcomes,
        [
            (0, Outcome::SentBeforeDiscarding(415)),
            (1, Outcome::Discarded)
        ]
    );
}

#[test]
fn a_small_body_is_read_and_the_connection_goes_on() {
    let log = Log::default();
    let body = br#"{"title": "x"}"#;
    let requests = vec![
        Fake::new(&log, 0, "POST", "/api/todos").with_body(
            "application/json",
            body.len(),
            &body[..],
        ),
        Fake::new(&log, 1, "GET", "/api"),
    ];
    let outcomes = serve(requests, &log);
    assert_eq!(
        outcomes,
        [(0, sent("201 Created")), (1, sent("204 No Content"))]
    );
}

#[test]
fn a_panicking_handler_is_a_500_and_the_connection_goes_on() {
    let log = Log::default();
    let requests = vec![
        Fake::new(&log, 0, "GET", "/panic"),
        Fake::new(&log, 1, "GET", "/api"),
    ];
    let outcomes = serve(requests, &log);
    assert_eq!(
        outcomes,
        [
            (0, sent("500 Internal Server Error")),
            (1, sent("204 No Content"))
        ]
    );
}

#[test]
fn ambiguous_framing_is_400_and_nothing_after_it_is_served() {
    let log = Log::default();
    let mut twice =
        Fake::new(&log, 0, "POST", "/api/todos").with_body("application/json", 2, &b"{}"[..]);
    twice.headers.push(("Content-Length", "2".into()));
    let requests = vec![twice, Fake::new(&log, 1, "DELETE", "/api/todos/1")];
    let outcomes = serve(requests, &log);
    assert_eq!(
        outcomes,
        [(0, sent("400 Bad Request")), (1, Outcome::Discarded)]
    );
}

/// `_fault=close`: with `every_verdict`, the connection's thread reads no
/// further once a request is left unanswered, so tiny_http can close the
/// socket at once instead of waiting in a read for a request that the
/// client, waiting for its answer, never sends.
#[test]
fn an_unanswered_request_ends_the_connection_before_another_is_read() {
    let log = Log::default();
    let ids = [(0, "/api"), (1, "/slow"), (2, "/close"), (3, "/api")];
    let requests = ids.map(|(id, target)| Fake::new(&log, id, "GET", target));
    let (outcomes, read) = serve_with(requests.into(), &log, true);
    let ok = sent("204 No Content");
    assert_eq!(
        outcomes,
        [(0, ok.clone()), (1, ok), (2, Outcome::Discarded)]
    );
    assert_eq!(read, 3);
}

#[test]
fn a_client_request_id_is_echoed_only_when_sane() {
    use super::{request_id, sane_request_id};
    for sane in [
        "a",
        "abc-123",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "trace:1.2_3",
        &"x".repeat(64),
    ] {
        assert!(sane_request_id(sane), "{sane:?}");
        let headers = vec![("X-Request-Id", sane.to_string())];
        assert_eq!(request_id(&headers), sane);
    }
    for insane in [
        "",
        &"x".repeat(65),
        "a b",
        "a\r\nSet-Cookie: x=1",
        "a\tb",
        "a\"b",
        "é",
        "a/b",
        "a\u{0}",
    ] {
        assert!(!sane_request_id(insane), "{insane:?}");
        let headers = vec![("X-Request-Id", insane.to_string())];
        let made = request_id(&headers);
        assert_ne!(made, insane);
        assert!(sane_request_id(&made), "{made:?}");
    }
}

#[test]
fn made_request_ids_differ_and_share_the_process_prefix() {
    let first = super::request_id(&[]);
    let second = super::request_id(&[]);
    assert_ne!(first, second);
    let prefix = |id: &str| id.rsplit_once('-').map(|(p, _)| p.to_string());
    assert_eq!(prefix(&first), prefix(&second));
    assert_eq!(prefix(&first).map(|p| p.len()), Some(12));
}
