//! widgets-todos: a small, synchronous HTTP/JSON server for two
//! collections, widgets and todos, under `/api`.
//!
//! # Bird's-eye view
//!
//! A request travels through the modules in the order they are listed
//! below. `server` and `connection` take it off the socket and hand a
//! [`request::Request`] to a handler; in production that handler is
//! [`router::App::handle`], which checks the path, method, query and
//! `Accept`, then calls one of the five generic handlers in `resource`.
//! Those decode and validate the body (`request`, `validate`, and the
//! resource's own file), touch the `store` once, and return a
//! [`response::Reply`]. Errors travel as [`error::ApiError`] and become
//! problem+json in one place. `connection` encodes the reply and writes it
//! back.
//!
//! # Codemap
//!
//! - `config`: flags and environment variables into a `Config`; `--help`.
//! - `server`: listening socket and its timeouts, the accept loop and its
//!   errors, the connection-thread pool, the workers, the watchdog,
//!   shutdown.
//! - `capacity`: the connection cap, and which connections are stuck in
//!   the HTTP library reading a request head.
//! - `health`: what `/healthz` reports about the connections.
//! - `connection`: a connection thread's loop, one request's trip through a
//!   worker (panic isolation), framing checks, one worker per connection,
//!   condemned connections. With `server`, the only modules that touch
//!   sockets.
//! - `access_log`: one line per request, buffered and written in batches.
//! - `cors`: the CORS headers every response gets.
//! - `delay`: responses held back by `--delay`/`_delay`, sent by a timer
//!   thread.
//! - `router`: the routing table; 404, 405 + `Allow`, `OPTIONS`.
//! - `request`: `Accept`, `Content-Type`, body cap, JSON and form decoding,
//!   the query string.
//! - `query`: the list query language (filters, `q`, sort, pages).
//! - `validate`: typed field getters that collect every error for a 422.
//! - `resource`: the `Resource` trait and the handlers widgets and todos share.
//! - `widgets`, `todos`: each resource's fields and rules.
//! - `store`: the `Mutex`-guarded collections and id allocation. The only
//!   module that locks the data.
//! - `items`: one collection's items by id, packed densely.
//! - `storage`: `--data`: the snapshot and journal files, group commit,
//!   compaction.
//! - `load`: `--data` at start-up: the snapshot streamed item by item, the
//!   journal replayed, every number and item checked.
//! - `response`: `Reply`, problem+json, and the HTTP/1.1 encoding.
//! - `error`: `ApiError` and its status codes.

pub mod config;
pub mod cors;
pub mod error;
pub mod health;
pub mod items;
pub mod load;
pub mod query;
pub mod request;
pub mod resource;
pub mod response;
pub mod router;
pub mod storage;
pub mod store;
pub mod todos;
pub mod transport;
pub mod validate;
pub mod widgets;

use std::io;
use std::sync::Arc;

use config::Config;
use router::App;
use store::Store;
use transport::Server;

/// The store the configuration asks for: in memory, or loaded from the
/// data files of `--data`. The error names the file and what is wrong.
pub fn open_store(config: &Config) -> Result<Store, String> {
    match &config.data {
        Some(path) => Store::open(config.max_items, path),
        None => Ok(Store::new(config.max_items)),
    }
}

/// Opens the store and serves it on `config.host:config.port`.
pub fn start(config: &Config) -> io::Result<Server> {
    let store = open_store(config).map_err(io::Error::other)?;
    let options = router::Options::from_config(config);
    start_app(config, Arc::new(App::with_options(store, options)))
}

/// What the transport takes from the configuration.
pub fn transport_settings(config: &Config) -> transport::Settings {
    transport::Settings {
        threads: config.threads,
        max_body_bytes: config.max_body_bytes,
        read_timeout: config.read_timeout,
        write_timeout: config.write_timeout,
        max_connections: config.max_connections,
        tls: config.tls.clone(),
    }
}

/// Binds and serves the given application (tests keep a handle on its store).
pub fn start_app(config: &Config, app: Arc<App>) -> io::Result<Server> {
    let settings = transport_settings(config);
    let listener = transport::bind(&config.host, config.port, &settings)?;
    let health = Arc::clone(&app.health);
    Server::start(listener, &settings, app, health)
}
