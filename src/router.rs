//! The routing table: which function answers which method on which path,
//! and the order in which a request is checked before it gets there.
//!
//! For a request to a known path the checks run in this order, each one
//! answering with an error before anything later is looked at (and before
//! anything changes):
//!
//! 1. the path: unknown path or malformed id is 404;
//! 2. the method: one the path does not take is 405 with `Allow`;
//! 3. a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) is
//!    answered here, with `Allow`, whatever its query string (the browser
//!    sends the URL of the request it asks about, query and all);
//! 4. the query string: a collection's GET, HEAD and OPTIONS take a list
//!    query (`query.rs`), any error in it is 400; other paths take none, so
//!    any parameter is 400; then a plain `OPTIONS` is answered;
//! 5. `Accept` must admit JSON, else 406;
//! 6. the handler. PUT, PATCH and DELETE: a missing item is 404; then for a
//!    body, its size (413), media type (415), syntax (400) and validation
//!    (422); then, under the store's lock, `If-Match` (412); POST: the
//!    store may be full (507). GET and HEAD: 304 for a matching
//!    `If-None-Match`.

use std::time::Duration;

use crate::config::{Config, Secret};
use crate::cors::{Asked, Cors};
use crate::error::ApiError;
use crate::health::Health;
use crate::query::{self, ListQuery};
use crate::request::{Method, Request};
use crate::resource::{self, Resource};
use crate::response::{JSON, Reply, Tag};
use crate::store::Store;
use crate::todos::Todo;
use crate::transport::Handler;
use crate::validate::{MAX_SAFE_INTEGER, parse_decimal};
use crate::widgets::Widget;
use std::sync::{Arc, OnceLock};

/// The OpenAPI 3.1 document describing this API.
pub const OPENAPI: &[u8] = include_bytes!("openapi.json");

const INDEX_ALLOW: &str = "GET, HEAD, OPTIONS";
const COLLECTION_ALLOW: &str = "GET, HEAD, POST, OPTIONS";
const COLLECTION_ALLOW_RESET: &str = "GET, HEAD, POST, DELETE, OPTIONS";
const ITEM_ALLOW: &str = "GET, HEAD, PUT, PATCH, DELETE, OPTIONS";

/// The body of `GET /api`: where the collections are.
#[derive(serde::Serialize)]
struct Index {
    widgets: &'static str,
    todos: &'static str,
}

/// The body of `GET /healthz`.
#[derive(serde::Serialize)]
struct Healthy {
    status: &'static str,
}

/// The application: what answers a request once it has been read.
pub struct App {
    pub store: Store,
    /// What the server's connection handling reports for `/healthz`.
    pub health: Arc<Health>,
    options: Options,
}

/// The options of [`App`] that change what the API does, for testers:
/// `--allow-reset`, `--delay`, `--auth-token`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub allow_reset: bool,
    pub delay: Duration,
    pub auth_token: Option<Secret>,
    /// Which origins browsers may call from (`--cors-origin`, `--no-cors`).
    pub cors: Cors,
}

impl Options {
    pub fn from_config(config: &Config) -> Options {
        Options {
            allow_reset: config.allow_reset,
            delay: config.delay,
            auth_token: config.auth_token.clone(),
            cors: config.cors.clone(),
        }
    }
}

impl Handler for App {
    /// Answers one request. Never fails: every error becomes its problem+json.
    /// An `/api` response is held back by `_delay` or `--delay`.
    fn handle(&self, req: &mut Request<'_>) -> Reply {
        let segments = segments(req.path());
        let mut reply = self.route(req, segments).unwrap_or_else(Reply::from);
        if matches!(segments, Some([Some("api"), ..])) {
            reply.delay = query::delay_param(req.query())
                .ok()
                .flatten()
                .unwrap_or(self.options.delay);
        }
        self.with_cors(req, reply)
    }

    /// A request the transport refused (ambiguous framing) or whose
    /// handling panicked: the problem document, with CORS headers.
    fn refuse(&self, req: &Request<'_>, error: ApiError) -> Reply {
        self.with_cors(req, Reply::from(error))
    }
}

impl App {
    /// The application with every tester option off.
    pub fn new(store: Store) -> App {
        App::with_options(store, Options::default())
    }

    pub fn with_options(store: Store, options: Options) -> App {
        App {
            store,
            health: Arc::default(),
            options,
        }
    }

    /// Adds the CORS headers every response carries, errors included.
    fn with_cors(&self, req: &Request<'_>, mut reply: Reply) -> Reply {
        let asked = |name| req.header(name);
        let preflight = req.is_preflight();
        self.options.cors.apply(
            &mut reply,
            Asked {
                origin: asked("Origin"),
                method: preflight
                    .then(|| asked("Access-Control-Request-Method"))
                    .flatten(),
                headers: preflight
                    .then(|| asked("Access-Control-Request-Headers"))
                    .flatten(),
            },
        );
        reply
    }

    fn route(
        &self,
        req: &mut Request<'_>,
        segments: Option<[Option<&str>; 4]>,
    ) -> Result<Reply, ApiError> {
        let path = req.path();
        let segments = segments.ok_or_else(|| ApiError::no_route(path))?;
        if segments[0] == Some("api") && req.method != Method::Options {
            self.authorize(req)?;
        }
        match segments {
            [Some("api"), None, ..] => self.index(req),
            [Some("healthz"), None, ..] => self.health(req),
            [Some("api"), Some("openapi.json"), None, _] => self.openapi(req),
            [Some("api"), Some("widgets"), None, _] => self.collection::<Widget>(req),
            [Some("api"), Some("widgets"), Some(id), None] => self.item::<Widget>(req, id),
            [Some("api"), Some("todos"), None, _] => self.collection::<Todo>(req),
            [Some("api"), Some("todos"), Some(id), None] => self.item::<Todo>(req, id),
            _ => Err(ApiError::no_route(path)),
        }
    }

    /// `/api`: links to the collections.
    fn index(&self, req: &mut Request<'_>) -> Result<Reply, ApiError> {
        prepare(req, INDEX_ALLOW, &[Method::Get, Method::Head], Query::None)?;
        match req.method {
            Method::Options => Ok(options(INDEX_ALLOW)),
            _ => Ok(Reply::json(
                200,
                &Index {
                    widgets: Widget::PATH,
                    todos: Todo::PATH,
                },
            )),
        }
    }

    /// With `--auth-token`: 401 unless `Authorization: Bearer TOKEN`. The
    /// comparison takes the same time wherever the tokens differ.
    fn authorize(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let Some(expected) = &self.options.auth_token else {
            return Ok(());
        };
        let sent = req.header("Authorization").and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("Bearer")
                .then_some(token.trim_start())
        });
        match sent {
            Some(token) if constant_time_eq(token.as_bytes(), expected.expose().as_bytes()) => {
                Ok(())
            }
            Some(_) => Err(ApiError::Unauthorized {
                detail: "the bearer token is wrong".into(),
            }),
            None => Err(ApiError::Unauthorized {
                detail: "this server needs Authorization: Bearer <token> on /api".into(),
            }),
        }
    }

    /// `/healthz`, outside `/api`: 200 while the server can serve (with
    /// `--data`, while its journal can be written; while its connections
    /// are not stuck, see `capacity.rs`), else 503.
    fn health(&self, req: &mut Request<'_>) -> Result<Reply, ApiError> {
        prepare(req, INDEX_ALLOW, &[Method::Get, Method::Head], Query::None)?;
        match req.method {
            Method::Options => Ok(options(INDEX_ALLOW)),
            _ => {
                self.store.writable()?;
                if let Some(trouble) = self.health.trouble() {
                    return Err(ApiError::Unavailable { detail: trouble });
                }
                Ok(Reply::json(200, &Healthy { status: "ok" }))
            }
        }
    }

    /// `/api/openapi.json`: the OpenAPI document, `src/openapi.json`,
    /// embedded at build time.
    fn openapi(&self, req: &mut Request<'_>) -> Result<Reply, ApiError> {
        static TAG: OnceLock<Tag> = OnceLock::new();
        prepare(req, INDEX_ALLOW, &[Method::Get, Method::Head], Query::None)?;
        if req.method == Method::Options {
            return Ok(options(INDEX_ALLOW));
        }
        let tag = TAG.get_or_init(|| Tag::of(OPENAPI));
        if let Some(unchanged) = resource::not_modified(req, tag) {
            return Ok(unchanged);
        }
        Ok(Reply::bytes(200, JSON, OPENAPI.to_vec()).with_header("ETag", tag.clone()))
    }

    /// `/api/widgets`, `/api/todos`.
    fn collection<T: Resource>(&self, req: &mut Request<'_>) -> Result<Reply, ApiError> {
        let (allow, methods): (_, &[Method]) = if self.options.allow_reset {
            (
                COLLECTION_ALLOW_RESET,
                &[Method::Get, Method::Head, Method::Post, Method::Delete],
            )
        } else {
            (COLLECTION_ALLOW, &[Method::Get, Method::Head, Method::Post])
        };
        // OPTIONS checks the query as a read would (a preflight skips it).
        let reading = matches!(req.method, Method::Get | Method::Head | Method::Options);
        let query = prepare(
            req,
            allow,
            methods,
            if reading {
                Query::List(query::parse::<T>)
            } else {
                Query::None
            },
        )?;
        match req.method {
            Method::Options => Ok(options(allow)),
            Method::Post => resource::create::<T>(&self.store, req),
            Method::Delete => resource::clear::<T>(&self.store),
            _ => resource::list::<T>(&self.store, req, &query.unwrap_or_default()),
        }
    }

    /// `/api/widgets/{id}`, `/api/todos/{id}`.
    fn item<T: Resource>(&self, req: &mut Request<'_>, id: &str) -> Result<Reply, ApiError> {
        let id = parse_decimal(id)
            .filter(|&id| (1..=MAX_SAFE_INTEGER).contains(&id))
            .ok_or_else(|| ApiError::NotFound {
                detail: format!(
                    "'{id}' is not a {} id: ids are positive integers like 1 or 42",
                    T::KIND
                ),
            })?;
        let methods = [
            Method::Get,
            Method::Head,
            Method::Put,
            Method::Patch,
            Method::Delete,
        ];
        prepare(req, ITEM_ALLOW, &methods, Query::None)?;
        match req.method {
            Method::Options => Ok(options(ITEM_ALLOW)),
            Method::Put => resource::update::<T>(&self.store, id, req, false),
            Method::Patch => resource::update::<T>(&self.store, id, req, true),
            Method::Delete => resource::delete::<T>(&self.store, req, id),
            _ => resource::get::<T>(&self.store, req, id),
        }
    }
}

/// What a path does with a query string.
enum Query {
    /// Takes none: any parameter is 400.
    None,
    /// A list query, parsed (and checked) by this function.
    List(fn(Option<&str>) -> Result<ListQuery, ApiError>),
}

/// Checks 2 to 5 of the module comment, shared by every path. A CORS
/// preflight ignores the query string: the browser sends the URL of the
/// request it asks about, query and all. Returns the list query, if the
/// path takes one.
fn prepare(
    req: &Request<'_>,
    allow: &'static str,
    methods: &[Method],
    query: Query,
) -> Result<Option<ListQuery>, ApiError> {
    if req.is_preflight() {
        return Ok(None);
    }
    if req.method != Method::Options && !methods.contains(&req.method) {
        return Err(ApiError::MethodNotAllowed {
            method: req.method_name.to_string(),
            allow,
        });
    }
    let parsed = match query {
        Query::None => {
            req.forbid_query()?;
            None
        }
        Query::List(parse) => Some(parse(req.query())?),
    };
    if req.method == Method::Options {
        return Ok(None);
    }
    req.check_accept()?;
    Ok(parsed)
}

/// Equality that looks at every byte whatever the first difference, so
/// the time taken does not tell how much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut differ = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        differ |= usize::from(x ^ y);
    }
    differ == 0
}

/// The answer to `OPTIONS`: what the path allows (RFC 9110 section 9.3.7).
fn options(allow: &'static str) -> Reply {
    Reply::empty(204).with_header("Allow", allow)
}

/// The path's first four segments (no route has more; a fourth means
/// "too long"), with one trailing slash dropped (`/api/todos/` is
/// `/api/todos`). An absolute-form target (`http://host/api`, RFC 9112
/// section 3.2.2) is reduced to its path. `None` for a target that is no
/// path at all, such as `*`.
fn segments(path: &str) -> Option<[Option<&str>; 4]> {
    let path = match path.strip_prefix('/') {
        Some(path) => path,
        None => {
            let (_, rest) = path.split_once("://")?;
            &rest[rest.find('/')? + 1..]
        }
    };
    let path = path.strip_suffix('/').unwrap_or(path);
    // A byte loop rather than `split('/')`, whose search cost more to set
    // up than to run on a path this short.
    let mut rest = Some(path);
    let mut next = || {
        let part = rest?;
        match part.bytes().position(|b| b == b'/') {
            Some(at) => {
                rest = Some(&part[at + 1..]);
                Some(&part[..at])
            }
            None => {
                rest = None;
                Some(part)
            }
        }
    };
    Some([next(), next(), next(), next()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(app: &App, method: &str, target: &str, body: &str) -> Reply {
        let mut bytes = body.as_bytes();
        let mut req = Request {
            method: Method::parse(method),
            method_name: method,
            target,
            headers: if body.is_empty() {
                Vec::new()
            } else {
                vec![("Content-Type", "application/json".into())]
            },
            content_length: Some(body.len() as u64),
            body: &mut bytes,
            max_body_bytes: 1024,
        };
        app.handle(&mut req)
    }

    #[test]
    fn segments_of_paths() {
        assert_eq!(
            segments("/api/todos/"),
            Some([Some("api"), Some("todos"), None, None])
        );
        assert_eq!(
            segments("/api/todos//"),
            Some([Some("api"), Some("todos"), Some(""), None])
        );
        assert_eq!(
            segments("/api/todos/1/x/y"),
            Some([Some("api"), Some("todos"), Some("1"), Some("x")])
        );
        assert_eq!(
            segments("http://localhost:8080/api"),
            Some([Some("api"), None, None, None])
        );
        assert_eq!(segments("http://localhost:8080"), None);
        assert_eq!(segments("*"), None);
    }

    #[test]
    fn routes_without_a_socket() {
        let app = App::new(Store::new(10));
        assert_eq!(call(&app, "GET", "/api", "").status, 200);
        assert_eq!(
            call(&app, "POST", "/api/todos", r#"{"userId": 1, "title": "a"}"#).status,
            201
        );
        assert_eq!(call(&app, "GET", "/api/todos/1/", "").status, 200);
        assert_eq!(call(&app, "GET", "/api/todos/01", "").status, 404);
        assert_eq!(call(&app, "GET", "/api/nothing", "").status, 404);
        assert_eq!(call(&app, "POST", "/api/todos/1", "").status, 405);
        assert_eq!(call(&app, "get", "/api", "").status, 405);
        assert_eq!(call(&app, "GET", "/api?x=1", "").status, 400);
        let options = call(&app, "OPTIONS", "/api/widgets/3", "");
        assert_eq!(
            (options.status, options.header("Allow")),
            (204, Some(ITEM_ALLOW))
        );
    }
}
