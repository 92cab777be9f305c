//! The ceiling of our stack, for `scripts/bench.sh`: the same HTTP library,
//! the same listening socket (`server::bind`: TCP_NODELAY, timeouts,
//! backlog), the same number of workers, but tiny_http's own accept loop
//! and connection threads (the server has its own), no store, no routing beyond a glance at the method and the path, and every
//! response a fixed string of bytes encoded once at start-up.
//!
//! It answers what the benchmark asks of the real server, with the bytes
//! the real server would send for a store of 200 todos:
//! - `GET /api/todos`: the list of 200;
//! - `GET /api/todos/{id}`, `PUT`/`PATCH /api/todos/{id}`: one todo;
//! - `POST /api/todos`: 201 with one todo and its `Location`;
//! - `DELETE /api/todos/{id}`: 204;
//! - anything else: 404.
//!
//! Run: `cargo run --release --example baseline -- --port 8081 --threads 2`
//! (it takes the server's own flags; it prints `listening on http://ADDR`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use widgets_todos::request::Method;
use widgets_todos::response::Reply;
use widgets_todos::server;

#[path = "common/mod.rs"]
mod common;
use common::{Asked, LIST_LEN, todo};

/// Connection threads tiny_http keeps ready. Its pool starts a thread for
/// a new connection only when it counts no idle one, and the count lags in
/// a burst; with this many ready, the benchmark's 64 connections are never
/// queued behind one another.
const CONNECTION_THREADS: usize = 64;

/// Every response the baseline sends, encoded once.
struct Canned {
    list: Vec<u8>,
    one: Vec<u8>,
    created: Vec<u8>,
    deleted: Vec<u8>,
    not_found: Vec<u8>,
}

impl Canned {
    fn new() -> Canned {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let list: Vec<_> = (1..=LIST_LEN).map(todo).collect();
        let encode = |reply: Reply| reply.encode(&date, false, None);
        Canned {
            list: encode(Reply::json(200, &list)),
            one: encode(Reply::json(200, &todo(1))),
            created: encode(
                Reply::json(201, &todo(LIST_LEN + 1))
                    .with_header("Location", format!("/api/todos/{}", LIST_LEN + 1)),
            ),
            deleted: encode(Reply::empty(204)),
            not_found: encode(Reply::empty(404)),
        }
    }

    fn pick(&self, method: &tiny_http::Method, url: &str) -> &[u8] {
        match common::asked(Method::parse(method.as_str()), url) {
            Asked::List => &self.list,
            Asked::Create => &self.created,
            Asked::One => &self.one,
            Asked::Delete => &self.deleted,
            Asked::Other => &self.not_found,
        }
    }
}

fn main() -> ExitCode {
    let config = match common::config("baseline") {
        Ok(config) => config,
        Err(status) => return status,
    };
    let listener = match server::bind(&config) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("baseline: cannot listen: {err}");
            return ExitCode::from(1);
        }
    };
    let addr = match listener.local_addr() {
        Ok(addr) => addr,
        Err(err) => {
            eprintln!("baseline: {err}");
            return ExitCode::from(1);
        }
    };
    let settings = tiny_http::ServerConfig {
        addr: tiny_http::ConfigListenAddr::IP(vec![addr]),
        ssl: None,
        min_threads: Some(CONNECTION_THREADS),
        max_threads: None,
    };
    let http =
        match tiny_http::Server::from_listener(listener, tiny_http::ListenAddr::IP(addr), settings)
        {
            Ok(http) => Arc::new(http),
            Err(err) => {
                eprintln!("baseline: {err}");
                return ExitCode::from(1);
            }
        };
    println!("listening on http://{addr}");
    let _ = std::io::stdout().flush();

    let canned = Arc::new(Canned::new());
    let workers: Vec<_> = (0..config.threads)
        .map(|_| {
            let (http, canned) = (Arc::clone(&http), Arc::clone(&canned));
            std::thread::spawn(move || {
                while let Ok(next) = http.recv() {
                    let Ok(request) = next else { continue };
                    let bytes = canned.pick(request.method(), request.url());
                    let mut writer = request.into_writer();
                    let _ = writer.write_all(bytes).and_then(|()| writer.flush());
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    ExitCode::SUCCESS
}
