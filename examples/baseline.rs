//! The ceiling of our stack, for `scripts/bench.sh`: the same HTTP library,
//! the same listening socket (`server::bind`: TCP_NODELAY, timeouts,
//! backlog), the same number of workers, but tiny_http's own accept loop
//! and connection threads (the server has its own; see `common/bare.rs`),
//! no store, no routing beyond a glance at the method and the path, and
//! every response a fixed string of bytes encoded once at start-up.
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

use std::borrow::Cow;
use std::process::ExitCode;
use std::time::SystemTime;

use widgets_todos::http::Method;
use widgets_todos::http::Response;

#[path = "common/bare.rs"]
mod bare;
#[path = "common/mod.rs"]
mod common;
use bare::Answer;
use common::{Asked, LIST_LEN, todo};

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
        let encode = |reply: Response| reply.encode(&date, false, None);
        Canned {
            list: encode(Response::json(200, &list)),
            one: encode(Response::json(200, &todo(1))),
            created: encode(
                Response::json(201, &todo(LIST_LEN + 1))
                    .with_header("Location", format!("/api/todos/{}", LIST_LEN + 1)),
            ),
            deleted: encode(Response::empty(204)),
            not_found: encode(Response::empty(404)),
        }
    }
}

impl Answer for Canned {
    fn answer(&self, request: &mut tiny_http::Request) -> Cow<'_, [u8]> {
        let bytes = match common::asked(Method::parse(request.method().as_str()), request.url()) {
            Asked::List => &self.list,
            Asked::Create => &self.created,
            Asked::One => &self.one,
            Asked::Delete => &self.deleted,
            Asked::Other => &self.not_found,
        };
        Cow::Borrowed(bytes)
    }
}

fn main() -> ExitCode {
    match common::config("baseline") {
        Ok(config) => bare::serve("baseline", &config, Canned::new()),
        Err(status) => status,
    }
}
