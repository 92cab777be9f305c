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
//! The folders are the request's path, from the edge to the core; which
//! imports which is drawn in docs/code.md. This is the project's one codemap: docs/code.md
//! ("Read the code") points here.
//!
//! | path | owns |
//! |---|---|
//! | `main.rs` | read the configuration, start logging, serve until a signal, the start-up summary, exit codes |
//! | `lib.rs` | this overview; `open_store()`, which fills a new store with `--generate`; `start_app()` |
//! | `transport/` | connections and bytes; the only code that names the HTTP library. `transport.rs`: its public face (bind, start, stop, wait); `connection.rs`: the normal path, a connection's requests read, answered and written one after the other, and the turns of `--threads`; `body.rs`: message bodies both ways: what a head says of its body, the body's reader, a response's write by one deadline, and the room for responses waiting on their clients; `unread.rs`: a body refused unread; `accept.rs`: the accept loop, the connection threads, the watchdog; `capacity.rs`: the connection cap, and what each connection's thread is doing (`Doing`: reading a head since when, serving, streaming, closing), which the thread sets and the watchdog and the stop read; `stream.rs`: a response whose body is a stream, sent without a turn; `sockets.rs`: a connection's socket found and shut down, for the idle connections closed at the cap and the streams at the stop; `access_log.rs`: one line per request |
//! | `app/` | `app.rs`: the routing table (the path to a resource, then the method: the one place a path is read), the checks in their order, the query decoded once and checked as the route takes it, the handlers of the collections and items; `setup.rs`: what `App` holds, its `Options`, and its making; `query_check.rs`: `_delay`, and the 400 of a path that takes no query; `cors.rs`: the CORS header fields of a response to a request with `Origin`; `index.rs`: `/`, `/api`, `/healthz`, the OpenAPI document, and the answers when the table has no route (404, 405 with its hint, `OPTIONS`); `openapi.rs`: the OpenAPI document served, `openapi.json` (`OPENAPI`) less what the configuration leaves off; `faults.rs`: failure on purpose (`--faults`); `record.rs`: the request log of `--record` and its endpoints, `/_admin/requests`; `events.rs`: `/api/events`, the change feed as server-sent events |
//! | `http/` | the request and the response as the application sees them, and the [`http::Handler`] trait where the application and the transport meet: header fields, the query and the body decoded, the HTTP/1.1 encoding; `negotiation.rs`: media types, what `Accept` admits and what `Content-Type` names; `prefer.rs`: `Prefer` (RFC 7240); `urlencoded.rs`: form bodies; `conditional.rs`: `If-Match` and `If-None-Match`; `problem.rs`: every error as problem+json |
//! | `model/` | widgets and todos, their rules (`Validator`), text (`Str`) and fields as queries read them (`Field`); `query.rs`: the list query language, `query/filter.rs`: its filters (values in a set, `_like` patterns), and `query/simple_rest.rs`: react-admin's simple-rest dialect translated into it; `spelling.rs`: "did you mean"; `generate.rs`: the items of `--generate`, from a seeded SplitMix64 |
//! | `store/` | `store.rs`: the locked collections, every read and write (one lock each), ids, list reads; `items.rs`: what is under a collection's lock: its items by id, packed, and what it keeps between writes (the whole list, up to a bound; sorted orders; items' JSON); `feed.rs`: every acknowledged write as an event, numbered in the order of the writes, for `/api/events`, and `feed/subscribers.rs`: its subscribers joining and reading it; with `--data`: `journal.rs` (the write-ahead journal, group commit, snapshots), `compaction.rs` (the store opened from its files and closed; when the snapshot is written; the files changed by another program, and `--watch`), `edits.rs` (how such a change is noticed), `load.rs` (loading at start-up), `direct.rs` (an item read straight into its type), `files.rs` (the files on disk, and their format) |
//! | `config/` | flags, arguments and environment variables into a `Command` (serve with a `Config`, `healthcheck`, help, version); `options.rs`: each option, its parser, json-server's spellings, and `--help`; `file.rs`: the options of a `--config` file (json-server.json); `modes.rs`: the settings the start-up summary names; `fault_settings.rs`: the values of `--faults`, `--fail-rate`, `--fail-status` |
//! | `error.rs` | `ApiError`: every way a request fails, and its status; the error statuses and their reason phrases; `lock`, the one place a lock is taken and a poisoned one taken back |
//! | `health.rs` | what the transport tells `/healthz` |
//! | `logging.rs` | the log's target at `info` and above: the program's name, not a module's path |
//! | `healthcheck.rs` | `widgets-todos healthcheck`: a minimal client that asks a running server's `/healthz` |
//! | `import/` | `widgets-todos import`: a json-server `db.json` made into a data file, with a report of what was left out. `import.rs`: the file read and written, its collections; `convert.rs`: each item converted, checked and given an id; `report.rs`: what was done, counted and said |
//!
//! # Read the code
//!
//! The files of `src/` one request runs on the defaults, in the order it
//! meets them, as `scripts/trace.sh 'GET /api/todos/1'` shows them (with
//! every function and its line). CI runs `scripts/trace.sh --check`, which
//! fails when a list below and the trace disagree on a file, either way.
//!
//! A `GET /api/todos/1` runs seven files:
//!
//! 1. `transport/connection.rs`: the connection's thread gets the request
//!    from the HTTP library (`serve_connection`) and says in its slot that
//!    it serves one, then that it waits for the next (for the watchdog and
//!    the stop); `serve` does the rest: the head copied (`Head`), the
//!    request's id, a turn of `--threads` taken, the handler called
//!    (`answer`), whether the connection closes after it, the response
//!    encoded and written;
//! 2. `error.rs`: [`error::lock`], the one place a lock is taken (the
//!    slot's, the turn's, then the store's);
//! 3. `transport/body.rs`: the head checked (`Framing`), the body's
//!    reader made (`BodyReader`), and the response written by one
//!    deadline (`write_all`);
//! 4. `http.rs`: [`http::Request`] (method, header fields) and
//!    [`http::Response`], with its encoding as HTTP/1.1 bytes;
//! 5. `app.rs`: [`app::App`]'s `handle`; the routing table, `target`
//!    (the resource the path names) then `route` (the method); `check`'s
//!    checks in order, the last the handler, `get`;
//! 6. `model.rs`: the id, read from the path (`parse_decimal`);
//! 7. `store.rs`: [`store::Store::get`] locks the collection and takes
//!    the item's JSON and `ETag`, made once by [`store::render`].
//!
//! A `POST /api/todos` runs eight:
//!
//! 1. `transport/connection.rs`, `transport/body.rs`: as for the GET, and
//!    the body's reader (`BodyReader`), which the handler reads;
//! 2. `http.rs`: the body read, up to its limit, and decoded from JSON
//!    into fields; the 201 encoded;
//! 3. `app.rs`: the routing table, the checks, and `create`;
//! 4. `model.rs`: the fields checked (`Validator`) into a new
//!    [`model::Todo`], which serde's derive serializes;
//! 5. `store.rs`, `error.rs`: [`store::Store::create`] gives it the
//!    next id under one lock, and makes its JSON and `ETag` after it;
//! 6. `store/items.rs`: the collection's items by id, where it goes.
//!
//! A `GET /api/todos?_page=1&_limit=5` runs nine:
//!
//! 1. `transport/connection.rs`, `transport/body.rs`, `http.rs`: as for
//!    the GET of one todo, and the query string decoded once into name
//!    and value pairs (`query_pairs`);
//! 2. `app.rs`: the routing table, which splits the query off; the
//!    checks, the query's by what the route takes (`Query::decode`,
//!    `check_query`); and `list`, which adds `X-Total-Count` and `Link`;
//! 3. `model/query.rs`, `model.rs`: the list query parsed (`parse`),
//!    its `plan` (here a page of the items in id order), run over the
//!    items, and the page's `Link` (`Content-Range` only in react-admin's
//!    dialect, `model/query/simple_rest.rs`);
//! 4. `store.rs`, `store/items.rs`, `error.rs`: [`store::Store::list`]
//!    takes the page under the collection's lock, and renders it.
//!
//! A `PATCH /api/todos/1` runs eight:
//!
//! 1. `transport/connection.rs`, `transport/body.rs`, `http.rs`: as for
//!    the POST, the body read and decoded;
//! 2. `app.rs`: the routing table, the checks, the id, and `update`,
//!    with `If-Match`, when sent, checked under the lock
//!    (`precondition`);
//! 3. `model.rs`: the fields checked (`Validator`) into a patch, then
//!    applied to the item;
//! 4. `store.rs`, `store/items.rs`, `error.rs`:
//!    [`store::Store::update`] changes the item and renders it, under
//!    one lock.
//!
//! With `--data`, `store/journal.rs` writes its record too; with
//! `--log-level info` (the default), `transport/access_log.rs` writes the
//! access line. The module comment of `transport.rs` says which
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
        Some(path) => {
            let durability = store::Durability {
                watch: config.watch,
                ..store::Durability::default()
            };
            Store::open_with(config.max_items, path, durability)?
        }
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
        keep_alive_timeout: config.keep_alive_timeout,
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
