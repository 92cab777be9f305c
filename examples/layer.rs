//! Our connection layer alone, for `scripts/bench.sh`: the real server's
//! accept loop, connection threads, one request at a time per connection,
//! framing checks, body read and
//! response encoding (`src/transport/`), with a handler that
//! answers every request with a reply made once at start-up: no routing
//! beyond a glance at the method and the path, no decoding, no store.
//!
//! Between the baseline (the bare HTTP library) and the real server, it
//! splits what the real server costs into what the layer costs on every
//! request, whatever the route, and what the application adds.
//!
//! It answers what the benchmark asks, with the replies the real server
//! gives for a store of 200 todos, headers included:
//! - `GET /api/todos`: the list of 200, its `ETag` and `X-Total-Count`;
//! - `GET /api/todos/{id}`, `PUT`/`PATCH /api/todos/{id}`: one todo, its `ETag`;
//! - `POST /api/todos`: 201 with one todo, its `ETag` and `Location`;
//! - `DELETE /api/todos/{id}`: 204;
//! - anything else: 404.
//!
//! Run: `cargo run --release --example layer -- --port 8082 --threads 2`
//! (it takes the server's own flags; it prints `listening on http://ADDR`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use widgets_todos::http::Response;
use widgets_todos::http::{Body, Request};
use widgets_todos::store::entity_tag;
use widgets_todos::transport::{self, Server};

#[path = "common/mod.rs"]
mod common;
use common::{Asked, LIST_LEN, todo};

/// A response body made once, with its entity tag.
struct Made {
    body: Arc<Vec<u8>>,
    etag: String,
}

impl Made {
    fn of(value: &impl serde::Serialize) -> Made {
        let body = serde_json::to_vec(value).unwrap_or_default();
        Made {
            etag: entity_tag(&body),
            body: Arc::new(body),
        }
    }

    /// A reply sharing the body, as the real server's are.
    fn reply(&self, status: u16) -> Response {
        Response::bytes(
            status,
            "application/json",
            Body::Shared(Arc::clone(&self.body)),
        )
        .with_header("ETag", self.etag.clone())
    }
}

/// Every body the layer sends.
struct Fixed {
    list: Made,
    one: Made,
    created: Made,
}

impl Fixed {
    fn new() -> Fixed {
        let list: Vec<_> = (1..=LIST_LEN).map(todo).collect();
        Fixed {
            list: Made::of(&list),
            one: Made::of(&todo(1)),
            created: Made::of(&todo(LIST_LEN + 1)),
        }
    }

    fn answer(&self, req: &Request<'_>) -> Response {
        // The headers below are literals, so that the layer allocates no
        // more per request than its fixed replies need.
        const _: () = assert!(LIST_LEN == 200, "X-Total-Count and Location say 200");
        match common::asked(req.method, req.path()) {
            Asked::List => self.list.reply(200).with_header("X-Total-Count", "200"),
            Asked::Create => self
                .created
                .reply(201)
                .with_header("Location", "/api/todos/201"),
            Asked::One => self.one.reply(200),
            Asked::Delete => Response::empty(204),
            Asked::Other => Response::empty(404),
        }
    }
}

fn main() -> ExitCode {
    let config = match common::config("layer") {
        Ok(config) => config,
        Err(status) => return status,
    };
    if let Err(err) = simple_logger::SimpleLogger::new()
        .with_level(config.log_level)
        .init()
    {
        eprintln!("layer: cannot start logging: {err}");
    }
    let settings = widgets_todos::transport_settings(&config);
    let listener = match transport::bind(&config.host, config.port, &settings) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("layer: cannot listen: {err}");
            return ExitCode::from(1);
        }
    };
    let fixed = Fixed::new();
    let handler = Arc::new(move |req: &mut Request<'_>| fixed.answer(req));
    let server = match Server::start(listener, &settings, handler, Arc::default()) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("layer: {err}");
            return ExitCode::from(1);
        }
    };
    let mut stdout = std::io::stdout();
    if let Err(err) =
        writeln!(stdout, "listening on http://{}", server.addr()).and_then(|()| stdout.flush())
    {
        eprintln!("layer: cannot print the listening address: {err}");
    }
    match server.wait() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("layer: {err}");
            ExitCode::from(1)
        }
    }
}
