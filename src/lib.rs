//! widgets-todos: a small, synchronous HTTP/JSON server for two
//! collections, widgets and todos, under `/api`.
//!
//! # Bird's-eye view
//!
//! One request, from the socket to the response:
//!
//! ```text
//! accept thread ─► the connection's own thread (the HTTP library parses
//!                  each request's head): transport::connection::serve
//!   ─► App::handle (app): the routing table, then the checks in order
//!        ─► http: the body decoded into fields ─► model: checked, a Todo
//!        ─► store: one lock, the whole read-modify-write, owned data out
//!   ◄─ a Response (http), encoded and written by the same thread
//! ```
//!
//! # Codemap
//!
//! The folders are the request's path; each depends only on those below it
//! in this table. This is the project's one codemap: docs/code.md
//! ("Read the code") points here.
//!
//! | path | owns |
//! |---|---|
//! | `main.rs` | read the configuration, start logging, serve until a signal, the start-up summary, exit codes |
//! | `lib.rs` | this overview; `open_store()`, which fills a new store with `--generate`; `start_app()` |
//! | `transport/` | connections and bytes; the only code that names the HTTP library. `mod.rs`: its public face (bind, start, stop, wait); `connection.rs`: the normal path, a connection's requests read, answered and written one after the other, and the workarounds on that path; `accept.rs`: the accept loop, the connection threads, the watchdog; `capacity.rs`: the connection cap, and whether each connection is serving or waiting; `stream.rs`: a response whose body is a stream, sent without a turn; `access_log.rs`: one line per request |
//! | `app/` | `mod.rs`: the routing table, the order of checks, the handlers of the collections and items; `cors.rs`: the CORS header fields every response gets; `index.rs`: `/`, `/api`, `/healthz`, the OpenAPI document, the 404 of unknown paths and the 405 of a method a path does not take; `openapi.rs`: the OpenAPI document served, `openapi.json` less what the configuration leaves off; `faults.rs`: failure on purpose (`--faults`); `record.rs`: the request log of `--record` and its endpoints, `/_admin/requests`; `events.rs`: `/api/events`, the change feed as server-sent events |
//! | `http/` | the request and the response as the application sees them, and the [`http::Handler`] trait where the application and the transport meet: header fields, the body decoded, the HTTP/1.1 encoding; `negotiation.rs`: `Accept`; `query.rs`: the query string; `prefer.rs`: `Prefer` (RFC 7240); `form.rs`: form bodies; `conditional.rs`: `If-Match` and `If-None-Match`; `problem.rs`: every error as problem+json |
//! | `model/` | widgets and todos, their rules (`Validator`) and text (`Str`); `query.rs`: the list query language, and `query/simple_rest.rs`: react-admin's simple-rest dialect translated into it; `spelling.rs`: "did you mean"; `generate.rs`: the items of `--generate`, from a seeded SplitMix64 |
//! | `store/` | `mod.rs`: the locked collections, ids, the items' JSON kept; `list.rs`: list reads, and what they keep between writes (the whole list, up to a bound; sorted orders); `items.rs`: items by id, packed; `feed.rs`: every acknowledged write as an event, numbered in the order of the writes, for `/api/events`; with `--data`: `journal.rs` (the write-ahead journal, group commit, snapshots), `compaction.rs` (when the snapshot is written), `load.rs` (loading at start-up), `direct.rs` (an item read straight into its type), `files.rs` (the files on disk) |
//! | `config/` | flags, arguments and environment variables into a `Command` (serve with a `Config`, `healthcheck`, help, version); `options.rs`: each option, its parser, json-server's spellings, and `--help`; `file.rs`: the options of a `--config` file (json-server.json); `modes.rs`: the settings the start-up summary names; `faults.rs`: the values of `--faults`, `--fail-rate`, `--fail-status` |
//! | `error.rs` | `ApiError`: every way a request fails, and its status; the error statuses and their reason phrases |
//! | `health.rs` | what the transport tells `/healthz` |
//! | `logging.rs` | the log's target at `info` and above: the program's name, not a module's path |
//! | `healthcheck.rs` | `widgets-todos healthcheck`: a minimal client that asks a running server's `/healthz` |
//! | `import/` | `widgets-todos import`: a json-server `db.json` made into a data file, with a report of what was left out. `mod.rs`: the file read and written, its collections; `items.rs`: each item converted, checked and given an id; `report.rs`: what was done, counted and said |
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
//! A `GET /api/todos/1` runs seven files:
//!
//! 1. `transport/connection.rs`: the connection's thread gets the request
//!    from the HTTP library (`serve_connection`), and `serve` does the
//!    rest: the head checked (`Framing`) and copied (`Head`), the request's
//!    id, the handler called, the response encoded and written;
//! 2. `transport/capacity.rs`: the connection's slot says it is serving a
//!    request, then waiting for the next (for the watchdog and the stop);
//! 3. `http/mod.rs`: [`http::Request`] (method, path, query, `Accept`) and
//!    [`http::Response`], with its encoding as HTTP/1.1 bytes;
//! 4. `app/mod.rs`: [`app::App`]'s routing table, `answer`'s checks in
//!    order, and `get`;
//! 5. `model/mod.rs`: the id, read from the path (`parse_decimal`);
//! 6. `store/mod.rs`: [`store::Store::get`] locks the collection and takes
//!    the item's JSON and `ETag`, made once by [`store::render`];
//! 7. `app/cors.rs`: the CORS header fields every response gets.
//!
//! A `POST /api/todos` runs eight:
//!
//! 1. `transport/connection.rs`, `transport/capacity.rs`: as for the GET,
//!    and the body's reader (`BodyReader`), which the handler reads;
//! 2. `http/mod.rs`: the body read, up to its limit, and decoded from JSON
//!    into fields; the 201 encoded;
//! 3. `app/mod.rs`: the routing table, the checks, and `create`;
//! 4. `model/mod.rs`: the fields checked (`Validator`) into a new
//!    [`model::Todo`], which serde's derive serializes;
//! 5. `store/mod.rs`: [`store::Store::create`] gives it the next id and
//!    keeps its JSON and `ETag`, under one lock;
//! 6. `store/items.rs`: the collection's items by id, where it goes;
//! 7. `app/cors.rs`: as for the GET.
//!
//! With `--data`, `store/journal.rs` writes its record too; with
//! `--log-level info` (the default), `transport/access_log.rs` writes the
//! access line. The module comment of `transport/mod.rs` says which
//! defect of the HTTP library each piece around the normal path works
//! around; `docs/learn.md` reads the trace line by line.

pub mod app;
pub mod config;
pub mod error;
pub mod health;
pub mod healthcheck;
pub mod http;
pub mod import;
pub mod logging;
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

/// What the transport takes from the configuration.
pub fn transport_settings(config: &Config) -> transport::Settings {
    transport::Settings {
        threads: config.threads,
        max_body_bytes: config.max_body_bytes,
        read_timeout: config.read_timeout,
        write_timeout: config.write_timeout,
        max_connections: config.max_connections,
        tls: config.tls.clone(),
        access_log: !config.quiet,
    }
}

/// Binds and serves the given application (tests keep a handle on its store).
pub fn start_app(config: &Config, app: Arc<App>) -> io::Result<Server> {
    let settings = transport_settings(config);
    let listener = transport::bind(&config.host, config.port, &settings)?;
    let health = Arc::clone(&app.health);
    Server::start(listener, &settings, app, health)
}
