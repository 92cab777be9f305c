//! `GET /api/events`, the change feed: every acknowledged write as
//! a server-sent event, read here from real sockets as a client reads
//! them, line by line.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use widgets_todos::config::Config;
use widgets_todos::store::Store;
use widgets_todos::transport::GRACE;

use crate::event_stream::Chunks;
use crate::support::{Remote, Response, TempDir, TestServer, config, parse_responses, problem};

const LIVE: &str = "Accept: text/event-stream";
const TODO: &str = r#"{"userId":1,"title":"watch me"}"#;
const WIDGET: &str = r#"{"price":"$1","quality":"good"}"#;

/// One event (or any block of lines up to a blank one): its fields in
/// order, comments left out.
#[derive(Debug, Clone, Default)]
struct Block {
    fields: Vec<(String, String)>,
    comments: Vec<String>,
}

impl Block {
    fn field(&self, name: &str) -> Option<&str> {
        let found = self.fields.iter().find(|(n, _)| n == name);
        found.map(|(_, value)| value.as_str())
    }

    fn id(&self) -> u64 {
        self.field("id")
            .expect("an id")
            .parse()
            .expect("a numeric id")
    }

    fn data(&self) -> Value {
        serde_json::from_str(self.field("data").expect("data")).expect("data is JSON")
    }
}

/// A client of the feed on a connection of its own.
struct Subscriber {
    /// The body, its chunked coding decoded.
    reader: BufReader<Box<dyn Read + Send>>,
    head: Response,
}

impl Subscriber {
    /// Sends `GET target` with `headers` (full lines) and reads the head.
    fn open(remote: &Remote, target: &str, headers: &[&str]) -> Subscriber {
        let mut stream = remote.connect();
        let mut request = format!("GET {target} HTTP/1.1\r\nHost: test\r\n");
        for header in headers {
            request.push_str(header);
            request.push_str("\r\n");
        }
        stream
            .write_all(format!("{request}\r\n").as_bytes())
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let n = reader.read_until(b'\n', &mut head).unwrap();
            assert!(
                n > 0,
                "closed before the head: {}",
                String::from_utf8_lossy(&head)
            );
        }
        let head = parse_responses(&head, true).remove(0);
        let body: Box<dyn Read + Send> = match head.header("Transfer-Encoding") {
            Some("chunked") => Box::new(Chunks::new(reader)),
            _ => Box::new(reader),
        };
        Subscriber {
            reader: BufReader::new(body),
            head,
        }
    }

    /// A live subscriber to `target`, once it has read its opening lines:
    /// from then on, every write is in its stream.
    fn live(remote: &Remote, target: &str, headers: &[&str]) -> (Subscriber, Block) {
        let mut headers = headers.to_vec();
        headers.push(LIVE);
        let mut subscriber = Subscriber::open(remote, target, &headers);
        assert_eq!(subscriber.head.status, 200, "{:?}", subscriber.head);
        let opening = subscriber.next().expect("the opening lines");
        assert_eq!(opening.field("retry"), Some("1000"), "{opening:?}");
        (subscriber, opening)
    }

    /// The next block of lines; `None` when the stream has ended.
    fn next(&mut self) -> Option<Block> {
        let mut block = Block::default();
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).unwrap() == 0 {
                return None;
            }
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                if block.fields.is_empty() && block.comments.is_empty() {
                    continue;
                }
                return Some(block);
            }
            match line.strip_prefix(':') {
                Some(comment) => block.comments.push(comment.trim().to_string()),
                None => {
                    let (name, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    block.fields.push((name.to_string(), value.to_string()));
                }
            }
        }
    }

    /// The next `n` events, comments skipped.
    fn events(&mut self, n: usize) -> Vec<Block> {
        let mut events = Vec::new();
        while events.len() < n {
            let block = self
                .next()
                .unwrap_or_else(|| panic!("ended after {events:?}"));
            if block.field("event").is_some() {
                events.push(block);
            }
        }
        events
    }

    /// Everything up to the end of the stream.
    fn rest(&mut self) -> Vec<Block> {
        std::iter::from_fn(|| self.next()).collect()
    }
}

/// A write as the writer saw it acknowledged: what its event must say.
#[derive(Debug, Clone)]
struct Write_ {
    kind: &'static str,
    data: String,
}

/// Makes the `n`-th write of a mix of every kind, in both collections, and
/// returns it as its event must show it: the item as a GET then returns it.
fn write(server: &TestServer, n: usize, ids: &mut (u64, u64)) -> Write_ {
    let (kind, collection, response) = match n % 5 {
        0 => ("created", "todos", server.json("POST", "/api/todos", TODO)),
        1 => (
            "created",
            "widgets",
            server.json("POST", "/api/widgets", WIDGET),
        ),
        2 => {
            let path = format!("/api/todos/{}", ids.0);
            (
                "updated",
                "todos",
                server.json("PATCH", &path, r#"{"completed":true}"#),
            )
        }
        3 => {
            let path = format!("/api/widgets/{}", ids.1);
            (
                "updated",
                "widgets",
                server.json("PUT", &path, r#"{"quality":"fine"}"#),
            )
        }
        _ => {
            let path = format!("/api/todos/{}", ids.0);
            ("deleted", "todos", server.delete(&path))
        }
    };
    assert!(response.status < 300, "{response:?}");
    let id = match kind {
        "created" => response.json()["id"].as_u64().unwrap(),
        _ if collection == "todos" => ids.0,
        _ => ids.1,
    };
    match collection {
        "todos" => ids.0 = id,
        _ => ids.1 = id,
    }
    let data = match kind {
        "deleted" => format!(r#"{{"collection":"{collection}","id":{id}}}"#),
        _ => {
            let got = server.get(&format!("/api/{collection}/{id}"));
            assert_eq!(got.body, response.body, "the write's response is the item");
            format!(
                r#"{{"collection":"{collection}","id":{id},"item":{}}}"#,
                got.text()
            )
        }
    };
    Write_ { kind, data }
}

/// Every event is one write, in the order of the writes, ids growing.
fn check(events: &[Block], writes: &[Write_], who: &str) {
    assert_eq!(events.len(), writes.len(), "{who}");
    for (i, (event, write)) in events.iter().zip(writes).enumerate() {
        assert_eq!(event.field("event"), Some(write.kind), "{who}, write {i}");
        assert_eq!(
            event.field("data"),
            Some(write.data.as_str()),
            "{who}, write {i}"
        );
        if i > 0 {
            assert!(event.id() > events[i - 1].id(), "{who}: ids grow");
        }
    }
}

#[test]
fn ten_subscribers_see_every_acknowledged_write_once_in_order() {
    const WRITES: usize = 60;
    const LEAVES_AFTER: usize = 20;
    let server = TestServer::start();
    let (gone_tx, gone) = mpsc::channel();
    let (back, back_rx) = mpsc::channel::<()>();
    let mut back_rx = Some(back_rx);
    let (writes, seen) = std::thread::scope(|scope| {
        let mut readers = Vec::new();
        for n in 0..10 {
            let (mut subscriber, _) = Subscriber::live(&server, "/api/events", &[]);
            let gone_tx = gone_tx.clone();
            let back_rx = if n == 3 { back_rx.take() } else { None };
            let server: &Remote = &server;
            readers.push(scope.spawn(move || {
                let Some(back_rx) = back_rx else {
                    return subscriber.events(WRITES);
                };
                // This one leaves mid-way, misses writes, and resumes.
                let mut events = subscriber.events(LEAVES_AFTER);
                drop(subscriber);
                gone_tx.send(()).unwrap();
                back_rx.recv().unwrap();
                let last = format!("Last-Event-ID: {}", events.last().unwrap().id());
                let (mut resumed, opening) = Subscriber::live(server, "/api/events", &[&last]);
                assert_eq!(opening.field("id"), Some(&last["Last-Event-ID: ".len()..]));
                events.extend(resumed.events(WRITES - LEAVES_AFTER));
                events
            }));
        }
        let mut ids = (0, 0);
        let mut writes = Vec::new();
        for n in 0..WRITES {
            if n == 30 {
                gone.recv().unwrap();
            }
            if n == 45 {
                back.send(()).unwrap();
            }
            writes.push(write(&server, n, &mut ids));
        }
        let seen: Vec<Vec<Block>> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        (writes, seen)
    });
    for (n, events) in seen.iter().enumerate() {
        check(events, &writes, &format!("subscriber {n}"));
    }
}

#[test]
fn concurrent_durable_writes_come_in_an_order_each_writer_agrees_with() {
    let dir = TempDir::new("events-durable");
    let store = Store::open(10_000, &dir.join("db.json")).unwrap();
    let server = TestServer::with_store(store);
    let (mut subscriber, _) = Subscriber::live(&server, "/api/events?_limit=100", &[]);
    let made: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let server: &Remote = &server;
                scope.spawn(move || {
                    let created = |_| server.create("/api/todos", TODO)["id"].as_u64().unwrap();
                    (0..25).map(created).collect::<Vec<u64>>()
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let events = subscriber.rest();
    let items: Vec<u64> = events
        .iter()
        .map(|e| e.data()["id"].as_u64().unwrap())
        .collect();
    let mut sorted = items.clone();
    sorted.sort_unstable();
    let mut all: Vec<u64> = made.concat();
    all.sort_unstable();
    assert_eq!(sorted, all, "every acknowledged write, once");
    for writer in &made {
        let order: Vec<u64> = items
            .iter()
            .copied()
            .filter(|i| writer.contains(i))
            .collect();
        assert_eq!(&order, writer, "in the order this writer made them");
    }
    // Created under one collection's lock: the ids of the items grow too.
    assert!(items.windows(2).all(|w| w[0] < w[1]), "{items:?}");
}

#[test]
fn a_subscriber_holds_no_turn_of_the_threads() {
    let server = TestServer::with_config(Config {
        threads: 1,
        ..config()
    });
    let subscribers: Vec<_> = (0..3)
        .map(|_| Subscriber::live(&server, "/api/events", &[]))
        .collect();
    // With the only turn held by a subscriber, this would wait forever.
    let created = server.create("/api/todos", TODO);
    for (mut subscriber, _) in subscribers {
        let event = &subscriber.events(1)[0];
        assert_eq!(event.data()["item"], created);
    }
}

#[test]
fn past_max_subscribers_is_503_with_retry_after_until_one_leaves() {
    let server = TestServer::with_config(Config {
        max_subscribers: 2,
        ..config()
    });
    let first = Subscriber::live(&server, "/api/events", &[]);
    let _second = Subscriber::live(&server, "/api/events", &[]);
    let origin = "Origin: http://localhost:3000";
    let full = server.send("GET", "/api/events", &[LIVE, origin], b"");
    let body = problem(&full, 503);
    assert_eq!(full.header("Retry-After"), Some("5"));
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("--max-subscribers")
    );
    assert!(
        full.header("Access-Control-Expose-Headers")
            .unwrap()
            .contains("Retry-After")
    );
    // One leaves: the server notices at its next write to it.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        server.create("/api/todos", TODO);
        let again = Subscriber::open(&server, "/api/events?_limit=0", &[LIVE]);
        if again.head.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the place was never freed");
    }
}

#[test]
fn a_resume_from_an_id_not_held_opens_with_one_resync_event() {
    let server = TestServer::start();
    let (mut watcher, _) = Subscriber::live(&server, "/api/events", &[]);
    for (id, target, collections) in [
        ("12", "/api/events?_limit=1", r#"["todos","widgets"]"#),
        (
            "not-a-number",
            "/api/events?_limit=1",
            r#"["todos","widgets"]"#,
        ),
        (
            "99999999999999999999",
            "/api/events?collection=widgets&_limit=1",
            r#"["widgets"]"#,
        ),
    ] {
        server.create("/api/todos", TODO);
        let latest = watcher.events(1)[0].id();
        let header = format!("Last-Event-ID: {id}");
        let (mut subscriber, resync) = Subscriber::live(&server, target, &[&header]);
        assert_eq!(resync.field("event"), Some("resync"), "{id}");
        assert_eq!(resync.id(), latest, "it goes on from the latest event");
        let expected: Value = serde_json::from_str(collections).unwrap();
        assert_eq!(resync.data()["collections"], expected, "{id}");
        server.create("/api/widgets", WIDGET);
        let next = &subscriber.events(1)[0];
        assert_eq!(
            next.id(),
            watcher.events(1)[0].id(),
            "then the events after it"
        );
        assert!(subscriber.rest().is_empty(), "_limit=1: the stream ends");
    }
}

#[test]
fn every_stream_ends_at_once_when_the_server_stops() {
    let server = TestServer::start();
    let subscribers: Vec<_> = (0..8)
        .map(|_| Subscriber::live(&server, "/api/events", &[]).0)
        .collect();
    let readers: Vec<_> = subscribers
        .into_iter()
        .map(|mut s| std::thread::spawn(move || s.rest()))
        .collect();
    let stopping = Instant::now();
    drop(server); // stops, and waits for the requests in flight
    for reader in readers {
        reader.join().unwrap();
    }
    // Streams that did not end would hold the stop for the whole grace.
    assert!(stopping.elapsed() < GRACE, "{:?}", stopping.elapsed());
}

#[test]
fn without_accept_event_stream_the_response_is_what_is_held_and_ends() {
    let server = TestServer::start();
    let (_live, opening) = Subscriber::live(&server, "/api/events", &[]);
    let mut look = Subscriber::open(&server, "/api/events", &[]);
    let blocks = look.rest();
    assert_eq!(
        blocks[0].field("id"),
        Some(opening.id().to_string().as_str())
    );
    assert!(
        blocks[1].comments[0].contains("Accept: text/event-stream"),
        "{blocks:?}"
    );
    server.create("/api/todos", TODO);
    server.create("/api/widgets", WIDGET);
    let since = format!("Last-Event-ID: {}", opening.id());
    let blocks = Subscriber::open(&server, "/api/events", &[&since]).rest();
    let kinds: Vec<_> = blocks.iter().filter_map(|b| b.field("event")).collect();
    assert_eq!(kinds, ["position", "created", "created"]);
    let narrowed = Subscriber::open(&server, "/api/events?collection=widgets", &[&since]).rest();
    let data: Vec<_> = narrowed
        .iter()
        .filter(|b| b.field("event").is_some_and(|e| e != "position"))
        .collect();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].data()["collection"], "widgets");
}

#[test]
fn the_head_the_stream_and_its_end() {
    let server = TestServer::start();
    let origin = "Origin: http://localhost:3000";
    let (mut subscriber, opening) = Subscriber::live(&server, "/api/events?_limit=2", &[origin]);
    let head = &subscriber.head;
    assert_eq!(head.header("Content-Type"), Some("text/event-stream"));
    assert_eq!(head.header("Cache-Control"), Some("no-cache"));
    assert_eq!(head.header("Connection"), Some("close"));
    assert_eq!(head.header("X-Accel-Buffering"), Some("no"));
    assert_eq!(
        head.header("Content-Length"),
        None,
        "the body ends with the connection"
    );
    assert_eq!(
        head.header("Access-Control-Allow-Origin"),
        Some("http://localhost:3000")
    );
    assert_eq!(head.header("Transfer-Encoding"), Some("chunked"));
    assert_eq!(opening.field("event"), Some("position"), "{opening:?}");
    assert_eq!(
        opening.fields.len(),
        4,
        "retry, event, id, data: {opening:?}"
    );
    server.create("/api/todos", TODO);
    server.json("PATCH", "/api/todos/1", r#"{"title":"seen"}"#);
    server.create("/api/todos", TODO);
    let rest = subscriber.rest();
    assert_eq!(
        rest.len(),
        2,
        "_limit=2: two events, then the end: {rest:?}"
    );
    assert_eq!(rest[1].data()["item"]["title"], "seen");
    // HEAD: the same head, no body.
    let head = server.send("HEAD", "/api/events", &[LIVE], b"");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("Content-Type"), Some("text/event-stream"));
    assert!(head.body.is_empty());
}

#[test]
fn a_reset_is_one_event() {
    let server = TestServer::with_config(Config {
        allow_reset: true,
        ..config()
    });
    server.create("/api/todos", TODO);
    let (mut subscriber, _) = Subscriber::live(&server, "/api/events?collection=todos", &[]);
    assert_eq!(server.delete("/api/widgets").status, 204);
    assert_eq!(server.delete("/api/todos").status, 204);
    let event = &subscriber.events(1)[0];
    assert_eq!(event.field("event"), Some("reset"));
    assert_eq!(event.field("data"), Some(r#"{"collection":"todos"}"#));
}

#[test]
fn bad_requests_to_the_feed_are_refused_before_subscribing() {
    let server = TestServer::start();
    for (target, status, named) in [
        ("/api/events?collection=users", 400, "collection"),
        (
            "/api/events?collection=todos&collection=todos",
            400,
            "collection",
        ),
        ("/api/events?_limit=-1", 400, "_limit"),
        ("/api/events?_limit=x", 400, "_limit"),
        ("/api/events?_limit=9007199254740992", 400, "_limit"),
        ("/api/events?_sort=id", 400, "_sort"),
    ] {
        let body = problem(&server.send("GET", target, &[LIVE], b""), status);
        assert!(
            body["detail"].as_str().unwrap().contains(named),
            "{target}: {body}"
        );
    }
    let post = server.json("POST", "/api/events", "{}");
    problem(&post, 405);
    assert_eq!(post.header("Allow"), Some("GET, HEAD, OPTIONS"));
    problem(
        &server.send("GET", "/api/events", &["Accept: text/html"], b""),
        406,
    );
    // Accept that admits JSON, or the stream by range, is served.
    for accept in ["Accept: application/json", "Accept: text/*", "Accept: */*"] {
        assert_eq!(
            server.send("GET", "/api/events", &[accept], b"").status,
            200
        );
    }
}

#[test]
fn the_token_cors_faults_and_the_request_log_apply_to_the_feed() {
    let server = TestServer::with_config(Config {
        auth_token: Some(widgets_todos::config::Secret::new("s3cret")),
        cors: widgets_todos::config::Cors::Origins(vec!["http://localhost:3000".into()]),
        faults: widgets_todos::config::fault_settings::FaultSettings {
            on: true,
            ..Default::default()
        },
        record: Some(10),
        ..config()
    });
    problem(&server.send("GET", "/api/events", &[LIVE], b""), 401);
    let token = "Authorization: Bearer s3cret";
    let origin = "Origin: http://localhost:3000";
    let (subscriber, _) = Subscriber::live(&server, "/api/events?_limit=0", &[token, origin]);
    let allowed = subscriber.head.header("Access-Control-Allow-Origin");
    assert_eq!(allowed, Some("http://localhost:3000"));
    let failed = server.send("GET", "/api/events?_status=503", &[LIVE, token], b"");
    problem(&failed, 503);
    let preflight = server.preflight("/api/events", "GET");
    assert_eq!(preflight.status, 204);
    let log = server.send(
        "GET",
        "/_admin/requests?path=/api/events&status=200",
        &[token],
        b"",
    );
    let entries = log.json();
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["method"], "GET");
}
