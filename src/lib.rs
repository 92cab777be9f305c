//! widgets-todos: a small, synchronous HTTP/JSON server for two
//! collections, widgets and todos, under `/api`.
//!
//! # Bird's-eye view
//!
//! One request, from the socket to the response:
//!
//! ```text
//! accept thread ─► the connection's thread (the HTTP library parses the head)
//!   ─► queue ─► a worker: transport::serve
//!        ─► App::handle (app): path, auth, method, query, Accept, the handler
//!             ─► http: the body decoded into fields ─► model: checked, a Todo
//!             ─► store: one lock, the whole read-modify-write, owned data out
//!        ◄─ a Response (http), encoded and written by the worker; access log
//! ```
//!
//! # Codemap
//!
//! The folders are the request's path; each depends only on those below it
//! in this table. This is the project's one codemap: the README's
//! Architecture section points here.
//!
//! | path | owns |
//! |---|---|
//! | `main.rs` | read the configuration, start logging, serve until a signal, the start-up summary, exit codes |
//! | `lib.rs` | this overview; `start()`; `open_store()`, which fills a new store with `--generate` |
//! | `transport/` | connections and bytes; the only code that names the HTTP library. `mod.rs`: its public face and the normal path of one request (`serve`); `accept.rs`: the accept loop, the connection threads, the watchdog; `capacity.rs`: the connection cap and stuck connections; `connection.rs`: a connection's requests, in order; `workers.rs`: the queue and the workers; `body.rs`: a body's framing and reader; `library.rs`: the HTTP library behind one trait; `delay.rs`: responses held back; `access_log.rs`: one line per request |
//! | `app/` | the routing table, the order of checks, auth, `_delay`, and the handlers; `cors.rs`: the CORS header fields every response gets; `index.rs`: what is served and where (`/`, with `index.html` for a browser; `/api`; `/healthz`; the OpenAPI document) and the 404 of unknown paths; `openapi.rs`: the OpenAPI document served, `openapi.json` (every feature on) less what the configuration leaves off; `faults.rs`: failure on purpose (`--faults`: `_status`, `_fault=close`, `--fail-rate`); `record.rs`: the request journal of `--record` and its endpoints, `/_admin/requests` |
//! | `http/` | the request and the response as the application sees them: header fields, content negotiation, JSON decoding, the query string, the HTTP/1.1 encoding; `form.rs`: form bodies; `conditional.rs`: `If-Match` and `If-None-Match`; `prefer.rs`: the `return` preference of `Prefer`; `problem.rs`: every error as problem+json, with the `message` and `errors` clients show; `status.rs`: the error statuses and their reason phrases (a request that succeeds never reaches it) |
//! | `model/` | widgets and todos, their rules (`Validator`) and text (`Str`); `query.rs`: the list query language, and in `query/simple_rest.rs` react-admin's simple-rest dialect of it; `spelling.rs`: "did you mean"; `generate.rs`: the items of `--generate`, from a seeded SplitMix64 |
//! | `store/` | `mod.rs`: the locked collections, ids, the cached items; `list.rs`: list reads, and what they keep between writes (the whole list, up to a bound; sorted orders); `items.rs`: items by id, packed; with `--data`: `journal.rs` (the journal, group commit, snapshots), `load.rs` (loading at start-up), `direct.rs` (an item loaded the fast way), `files.rs` (the files on disk) |
//! | `config/` | flags, arguments and environment variables into a `Command` (serve with a `Config`, `healthcheck`, help, version); `options.rs`: each option, its parser, and `--help`; `faults.rs`: the values of `--faults`, `--fail-rate`, `--fail-status`, and which statuses `_status` may ask for |
//! | `error.rs` | `ApiError`: every way a request fails, and its status |
//! | `health.rs` | what the transport tells `/healthz` |
//! | `healthcheck.rs` | `widgets-todos healthcheck`: a minimal client that asks a running server's `/healthz` |
//!
//! # Read the code
//!
//! The files of `src/` one request runs on the defaults, in the order it
//! meets them, as `scripts/trace.sh 'GET /api/todos/1'` shows them (with
//! every function and its line). CI runs `scripts/trace.sh --check`, which
//! fails when a list below and the trace disagree on a file, either way.
//! So that it can read them: a paragraph that names a request in
//! backquotes opens that request's list, and each item of the list starts
//! with the paths it is about, in backquotes; the rest is prose.
//!
//! A `GET /api/todos/1` runs thirteen files:
//!
//! 1. `transport/workers.rs`: the connection's thread reads the request
//!    (`Workers::read`; the HTTP library parses its head) and queues it; a
//!    worker takes it off the queue (`Workers::work`);
//! 2. `transport/capacity.rs`: when the connection started reading the
//!    head, for the watchdog, which finds connections that make no progress;
//! 3. `transport/connection.rs`: a connection's requests are served one at
//!    a time, in order (`Connection::arrive`, `Connection::next`);
//! 4. `transport/body.rs`: how the header fields frame the body
//!    (`Framing::of`), and the reader the handler gets;
//! 5. `transport/library.rs`: the request as the HTTP library read it,
//!    behind the trait `Incoming` (method, target, header fields), and
//!    `send`, which writes the response;
//! 6. `transport/mod.rs`: `serve`, the normal path: the request's id and
//!    `Date`, the handler called, the response out;
//! 7. `http/mod.rs`: [`http::Request`] (method, path, query, `Accept`) and
//!    [`http::Response`], with its `ETag` and its encoding as HTTP/1.1 bytes;
//! 8. `app/mod.rs`: [`app::App`]'s routing table, the checks, and `get`;
//! 9. `app/faults.rs`: failure on purpose, asked on every request although
//!    `--faults` is off;
//! 10. `model/mod.rs`: the id, read from the path (`parse_decimal`);
//! 11. `store/mod.rs`: [`store::Store::get`] locks the collection and takes
//!     the item's JSON and `ETag` from the collection's cache, made once by
//!     [`store::render`];
//! 12. `app/cors.rs`: the CORS header fields every response gets;
//! 13. `transport/access_log.rs`: whether the access log is on (it is off
//!     by default).
//!
//! A `POST /api/todos` runs the same files, and two more of the store:
//!
//! 1. `transport/workers.rs`, `transport/capacity.rs`,
//!    `transport/connection.rs`: as for the GET;
//! 2. `transport/body.rs`: the body's reader, which the handler reads;
//! 3. `transport/library.rs`, `transport/mod.rs`: as for the GET;
//! 4. `http/mod.rs`: the body read, up to its limit, and decoded from JSON
//!    into fields; the 201 encoded;
//! 5. `app/mod.rs`: the routing table, the checks, and `create`;
//! 6. `app/faults.rs`: as for the GET;
//! 7. `model/mod.rs`: the fields checked (`Validator`) into a new
//!    [`model::Todo`], which serde's derive serializes;
//! 8. `store/mod.rs`: [`store::Store::create`] gives it the next id and
//!    keeps its JSON and `ETag`, under one lock;
//! 9. `store/items.rs`: the collection's items by id, where it goes;
//! 10. `store/list.rs`: the sorted orders kept for list reads, dropped;
//! 11. `app/cors.rs`, `transport/access_log.rs`: as for the GET.
//!
//! With `--data`, `store/journal.rs` writes its record too. The module
//! comment of `transport/mod.rs` says what each file of the transport is
//! for, and which defect of the HTTP library each one works around.

pub mod app;
pub mod config;
pub mod error;
pub mod health;
pub mod healthcheck;
pub mod http;
pub mod model;
pub mod store;
pub mod transport;

use std::io;
use std::sync::Arc;

use app::App;
use config::Config;
use model::generate::Spec;
use store::Store;
use transport::Server;

/// The store the configuration asks for: in memory, or loaded from the
/// data files of `--data`; with `--generate`, filled with generated items.
/// The error names the file and what is wrong.
pub fn open_store(config: &Config) -> Result<Store, String> {
    let store = match &config.data {
        Some(path) => Store::open(config.max_items, path)?,
        None => Store::new(config.max_items),
    };
    if let Some(spec) = config.generate {
        generate(&store, spec, config.seed)?;
    }
    Ok(store)
}

/// Fills an empty store with the items of `--generate` (`model::generate`),
/// created as a `POST` creates them, each collection under one lock. A store that already holds
/// items is refused: generated ids would follow the loaded ones, and a
/// second start would add the same items again.
fn generate(store: &Store, spec: Spec, seed: u64) -> Result<(), String> {
    use model::{Todo, Widget};
    if store.count::<Todo>() > 0 || store.count::<Widget>() > 0 {
        return Err(
            "--generate fills only an empty store, and this data already holds items: \
             start without --generate, or give a new data file"
                .into(),
        );
    }
    let failed = |err: error::ApiError| format!("cannot store a generated item: {err}");
    let todos = model::generate::todos(seed, spec.todos).map_err(failed)?;
    store.create_all::<Todo>(todos).map_err(failed)?;
    let widgets = model::generate::widgets(seed, spec.widgets).map_err(failed)?;
    store.create_all::<Widget>(widgets).map_err(failed)
}

/// Opens the store and serves it on `config.host:config.port`.
pub fn start(config: &Config) -> io::Result<Server> {
    let store = open_store(config).map_err(io::Error::other)?;
    let options = app::Options::from_config(config);
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
        may_leave_unanswered: config.faults.on,
    }
}

/// Binds and serves the given application (tests keep a handle on its store).
pub fn start_app(config: &Config, app: Arc<App>) -> io::Result<Server> {
    let settings = transport_settings(config);
    let listener = transport::bind(&config.host, config.port, &settings)?;
    let health = Arc::clone(&app.health);
    Server::start(listener, &settings, app, health)
}
