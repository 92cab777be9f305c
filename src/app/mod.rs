//! The application: what answers a request once the transport has read it.
//! The routing table, the order of checks, authentication, CORS, and the
//! handlers of every route.
//!
//! For a request to a known path the checks run in this order, each one
//! answering with an error before anything later is looked at (and before
//! anything changes):
//!
//! 1. the path: unknown path or malformed id is 404 (`index.rs`: with a
//!    hint when it names a collection outside `/api`);
//! 2. with `--auth-token`, on `/api` (and, with `--record`, on `/_admin`)
//!    and not for `OPTIONS`: the bearer token, else 401; then, first in
//!    the handlers of a collection and of an item (a malformed id too),
//!    failure on purpose (`faults.rs`: `_status`, `_fault`,
//!    `--fail-rate`), before anything is read or changed;
//! 3. the method: one the path does not take is 405 with `Allow`;
//! 4. a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) is
//!    answered here, whatever its query (the browser sends the URL of the
//!    request it asks about, query and all);
//! 5. the query: a collection's GET, HEAD and OPTIONS take a list query
//!    (`model/query.rs`), any error in it is 400; other paths take none but
//!    `_delay` and `_` (a cache-buster, ignored); then a plain `OPTIONS` is
//!    answered;
//! 6. `Accept` must admit JSON, else 406 (`/` also serves HTML);
//! 7. the handler. PUT, PATCH and DELETE: a missing item is 404; then for a
//!    body, its size (413), media type (415), syntax (400) and validation
//!    (422); then, under the store's lock, `If-Match` (400 when malformed,
//!    412 when no tag matches); POST: the store may be full (507). GET and
//!    HEAD: 304 for a matching `If-None-Match` (400 when malformed).
//!
//! A DELETE answers 200 with the item deleted, as json-server does and as
//! its clients read (`fetch(...).then(r => r.json())`, react-admin's
//! providers); a client that asks for no content with `Prefer:
//! return=minimal` (RFC 7240) gets 204 (RFC 9110 section 9.3.5 allows
//! either), and `Preference-Applied` says which `return` was honoured.
//!
//! Every response, errors included, then gets its CORS header fields
//! ([`App::cors`]), and an `/api` response the delay of `_delay` or
//! `--delay`. The index routes (`/`, `/api`, `/healthz`, the OpenAPI
//! document) are answered in `index.rs`; the OpenAPI document itself, made
//! for the configuration, is `openapi.rs`'s. With `--record N`, each
//! exchange is then recorded, and `/_admin/requests` shows the last N
//! (`record.rs`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::config::{self, Config, Cors, MAX_DELAY_MS, Secret};
use crate::error::ApiError;
use crate::health::Health;
use crate::http::conditional::Condition;
use crate::http::prefer::{Return, return_preference};
use crate::http::{Body, JSON, Method, Request, Response, query_pairs};
use crate::model::query::{self, ListQuery, bad, repeated};
use crate::model::{MAX_SAFE_INTEGER, Todo, Widget, parse_decimal};
use crate::store::{Listed, Rendered, Store, Stored, render};
use crate::transport::Handler;

mod cors;
mod faults;
mod index;
mod openapi;
mod record;

pub use cors::EXPOSED;

/// The OpenAPI 3.1 document describing this API with every feature on;
/// `openapi.rs` makes the one served.
pub const OPENAPI: &[u8] = include_bytes!("openapi.json");

/// The methods of each kind of path, for `Allow` (RFC 9110 section 10.2.1).
const INDEX: &[Method] = &[Method::Get, Method::Head];
const COLLECTION: &[Method] = &[Method::Get, Method::Head, Method::Post];
const COLLECTION_RESET: &[Method] = &[Method::Get, Method::Head, Method::Post, Method::Delete];
const ITEM: &[Method] = &[
    Method::Get,
    Method::Head,
    Method::Put,
    Method::Patch,
    Method::Delete,
];

/// The application: the store, and the options that change what it does.
pub struct App {
    pub store: Store,
    /// What the transport reports for `/healthz`.
    pub health: Arc<Health>,
    options: Options,
    /// With `--faults`: its settings and its count of requests.
    faults: Option<faults::Faults>,
    /// `--record N`: the request journal; `None` when off.
    recorder: Option<record::Recorder>,
    /// The OpenAPI document this configuration serves (`openapi.rs`),
    /// made at its first request: making it takes longer than the rest of
    /// the start-up together.
    openapi: OnceLock<openapi::Served>,
}

/// The options of [`App`]: `--allow-reset`, `--delay`, `--auth-token`, CORS, `--faults`, `--seed`, `--record`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub allow_reset: bool,
    pub delay: Duration,
    pub auth_token: Option<Secret>,
    pub cors: Cors,
    pub faults: config::faults::Faults,
    pub seed: u64,
    pub record: Option<usize>,
}

impl Options {
    pub fn from_config(config: &Config) -> Options {
        Options {
            allow_reset: config.allow_reset,
            delay: config.delay,
            auth_token: config.auth_token.clone(),
            cors: config.cors.clone(),
            faults: config.faults.clone(),
            seed: config.seed,
            record: config.record,
        }
    }
}

/// A request's query, decoded once: its name and value pairs, or why it
/// cannot be decoded (a 400, answered at its turn in the checks).
type Query = Result<Vec<(String, String)>, ApiError>;

impl Handler for App {
    /// Answers one request, and records it with `--record`. Never fails:
    /// every error becomes its problem+json.
    fn handle(&self, req: &mut Request<'_>) -> Response {
        let Some(recorder) = &self.recorder else {
            return self.respond(req);
        };
        let started = record::Started::now();
        let response = self.respond(req);
        let body = req.body_read.take();
        recorder.add(req, body, &response, started);
        response
    }

    /// A request the transport refused (ambiguous framing) or whose
    /// handling panicked: the problem document, with CORS header fields.
    fn refuse(&self, req: &Request<'_>, error: ApiError) -> Response {
        let response = self.cors(req, Response::from(error));
        if let Some(recorder) = &self.recorder {
            let started = record::Started::now();
            recorder.add(req, req.body_read.clone(), &response, started);
        }
        response
    }
}

impl App {
    /// The response to a request the transport passed on.
    fn respond(&self, req: &mut Request<'_>) -> Response {
        let (path, query) = req.path_and_query();
        let (parts, count) = segments(path);
        let segments = &parts[..count];
        let query = query_pairs(query);
        let mut response = self
            .route(req, segments, &query)
            .unwrap_or_else(Response::from);
        if segments.first() == Some(&"api") {
            let delay = delay(&query).ok().flatten();
            response.delay = delay.unwrap_or(self.options.delay);
        }
        self.cors(req, response)
    }

    /// The application with every option off.
    pub fn new(store: Store) -> App {
        App::with_options(store, Options::default())
    }

    pub fn with_options(store: Store, options: Options) -> App {
        let health = Arc::default();
        let recorder = options.record.map(record::Recorder::new);
        App {
            store,
            health,
            faults: faults::Faults::new(&options.faults, options.seed),
            options,
            recorder,
            openapi: OnceLock::new(),
        }
    }

    /// The routing table, checks 1 and 2 of the module comment.
    fn route(
        &self,
        req: &mut Request<'_>,
        segments: &[&str],
        query: &Query,
    ) -> Result<Response, ApiError> {
        if segments.first() == Some(&"api") && req.method != Method::Options {
            self.authorize(req)?;
        }
        match segments {
            [""] => self.home(req, query),
            ["api"] => self.index(req, query),
            ["healthz"] => self.health(req, query),
            ["api", "openapi.json"] => self.openapi(req, query),
            ["api", "widgets"] => self.collection::<Widget>(req, query),
            ["api", "widgets", id] => self.item::<Widget>(req, id, query),
            ["api", "todos"] => self.collection::<Todo>(req, query),
            ["api", "todos", id] => self.item::<Todo>(req, id, query),
            ["_admin", ..] => self.admin(req, segments, query),
            _ => Err(index::no_route(req.target, segments)),
        }
    }

    /// `/api/widgets`, `/api/todos`: the list, a create, and with
    /// `--allow-reset` a reset.
    fn collection<T: Stored>(
        &self,
        req: &mut Request<'_>,
        query: &Query,
    ) -> Result<Response, ApiError> {
        if let Some(failed) = faults::check(self.faults.as_ref(), req, query)? {
            return Ok(failed);
        }
        let methods = if self.options.allow_reset {
            COLLECTION_RESET
        } else {
            COLLECTION
        };
        if req.method == Method::Delete && !self.options.allow_reset {
            return Err(ApiError::MethodNotAllowed {
                method: req.method_name.to_string(),
                allow: allow(methods),
                hint: Some(format!(
                    "DELETE /api/{c} (every {k} at once) needs the server started with \
                     --allow-reset; to delete one {k}, DELETE /api/{c}/{{id}}",
                    c = T::COLLECTION,
                    k = T::KIND,
                )),
            });
        }
        // GET, HEAD and a plain OPTIONS read the query as a list query.
        let listing = matches!(req.method, Method::Get | Method::Head | Method::Options);
        if !listing {
            if let Some(answered) = prepare(req, methods, query)? {
                return Ok(answered);
            }
        } else if let Some(answered) = check_method(req, methods) {
            return answered;
        }
        match req.method {
            Method::Post => self.create::<T>(req),
            Method::Delete => {
                self.store.clear::<T>()?;
                Ok(Response::empty(204))
            }
            _ => {
                delay(query)?;
                let list = query::parse::<T>(query.as_ref().map_err(Clone::clone)?)?;
                if req.method == Method::Options {
                    return Ok(options(methods));
                }
                req.check_accept()?;
                self.list::<T>(req, &list)
            }
        }
    }

    /// `/api/widgets/{id}`, `/api/todos/{id}`.
    fn item<T: Stored>(
        &self,
        req: &mut Request<'_>,
        id: &str,
        query: &Query,
    ) -> Result<Response, ApiError> {
        if let Some(failed) = faults::check(self.faults.as_ref(), req, query)? {
            return Ok(failed);
        }
        let id = parse_decimal(id)
            .filter(|id| (1..=MAX_SAFE_INTEGER).contains(id))
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "'{id}' is not a {} id: ids are positive integers like 1 or 42",
                    T::KIND
                ))
            })?;
        if let Some(answered) = prepare(req, ITEM, query)? {
            return Ok(answered);
        }
        match req.method {
            Method::Put => self.update::<T>(req, id, false),
            Method::Patch => self.update::<T>(req, id, true),
            Method::Delete => self.delete::<T>(req, id),
            _ => self.get::<T>(req, id),
        }
    }

    /// `GET /api/{collection}`: the items the query selects (every item,
    /// ascending id, by default), with `ETag`, `X-Total-Count`, `Link` for
    /// a `_page` query, and `Content-Range` for one in react-admin's
    /// simple-rest dialect (`model/simple_rest.rs`).
    fn list<T: Stored>(&self, req: &Request<'_>, query: &ListQuery) -> Result<Response, ApiError> {
        let Listed { rendered, total } = self.store.list::<T>(query)?;
        if let Some(unchanged) = not_modified(req, &rendered.etag)? {
            return Ok(unchanged);
        }
        let mut response = json(200, rendered).with_header("X-Total-Count", total.to_string());
        if let Some(link) = query.link(&format!("/api/{}", T::COLLECTION), total) {
            response = response.with_header("Link", link);
        }
        if let Some(range) = query.content_range(T::COLLECTION, total) {
            response = response.with_header("Content-Range", range);
        }
        Ok(response)
    }

    /// `GET /api/{collection}/{id}`, with its `ETag`; 304 for a matching
    /// `If-None-Match`.
    fn get<T: Stored>(&self, req: &Request<'_>, id: u64) -> Result<Response, ApiError> {
        let rendered = self.store.get::<T>(id)?.ok_or_else(|| missing::<T>(id))?;
        if let Some(unchanged) = not_modified(req, &rendered.etag)? {
            return Ok(unchanged);
        }
        Ok(json(200, rendered))
    }

    /// `POST /api/{collection}`: 201 with the item, its `Location` and `ETag`.
    fn create<T: Stored>(&self, req: &mut Request<'_>) -> Result<Response, ApiError> {
        let new = T::parse_new(req.fields(false, T::EXAMPLE)?)?;
        let item = self.store.create::<T>(new)?;
        let mut location = String::with_capacity(40);
        for part in [
            "/api/",
            T::COLLECTION,
            "/",
            itoa::Buffer::new().format(item.id()),
        ] {
            location.push_str(part);
        }
        Ok(json(201, render(&item)?).with_header("Location", location))
    }

    /// `PUT` and `PATCH /api/{collection}/{id}`: both merge the fields sent
    /// into the item (README, "Updates"); PATCH also takes merge-patch+json.
    /// With `If-Match`, only while the item is still the version named.
    fn update<T: Stored>(
        &self,
        req: &mut Request<'_>,
        id: u64,
        merge_patch: bool,
    ) -> Result<Response, ApiError> {
        // An unknown id is 404 whatever the body or If-Match (RFC 9110
        // section 13.2.1: a failure found before the content is processed
        // wins over preconditions). Then the body's checks, then If-Match,
        // under the store's lock: of two updates sent with the same
        // If-Match, only the first to get there may change the item.
        if !self.store.contains::<T>(id) {
            return Err(missing::<T>(id));
        }
        let patch = T::parse_patch(req.fields(merge_patch, T::EXAMPLE)?, id)?;
        let check = |item: &T| precondition(req.header("If-Match"), item);
        let updated = self
            .store
            .update::<T>(id, check, |item| item.apply(patch))?;
        // `None`: deleted since the check above.
        let item = updated.ok_or_else(|| missing::<T>(id))?;
        Ok(json(200, render(&item)?))
    }

    /// `DELETE /api/{collection}/{id}`: 200 with the item deleted, or 404
    /// when already gone; with `If-Match`, only while the item is still
    /// the version named. `Prefer: return=minimal` gets 204 (see the
    /// module comment).
    fn delete<T: Stored>(&self, req: &Request<'_>, id: u64) -> Result<Response, ApiError> {
        let check = |item: &T| precondition(req.header("If-Match"), item);
        let deleted = self.store.delete::<T>(id, check)?;
        let item = deleted.ok_or_else(|| missing::<T>(id))?;
        let preference = return_preference(req.header("Prefer"));
        let response = if preference == Some(Return::Minimal) {
            Response::empty(204)
        } else {
            Response::json(200, &item)
        };
        Ok(match preference {
            Some(preference) => response.with_header("Preference-Applied", preference.applied()),
            None => response,
        })
    }

    /// With `--auth-token`: 401 unless `Authorization: Bearer TOKEN`. The
    /// comparison takes the same time wherever the tokens differ, so the
    /// time taken does not tell how much of a guessed token was right.
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
        let Some(sent) = sent else {
            return Err(ApiError::Unauthorized {
                detail: "this server needs Authorization: Bearer <token> on /api and /_admin"
                    .into(),
            });
        };
        let (a, b) = (sent.as_bytes(), expected.expose().as_bytes());
        let mut differ = a.len() ^ b.len();
        for i in 0..a.len().max(b.len()) {
            differ |= usize::from(a.get(i).unwrap_or(&0) ^ b.get(i).unwrap_or(&0));
        }
        if differ != 0 {
            return Err(ApiError::Unauthorized {
                detail: "the bearer token is wrong".into(),
            });
        }
        Ok(())
    }
}

/// Checks 3 to 6 of the module comment for a path that takes no list
/// query; `Some` when they answer the request already (`OPTIONS`).
fn prepare(
    req: &Request<'_>,
    methods: &[Method],
    query: &Query,
) -> Result<Option<Response>, ApiError> {
    if let Some(answered) = check_method_and_query(req, methods, query)? {
        return Ok(Some(answered));
    }
    req.check_accept()?;
    Ok(None)
}

/// Checks 3 to 5 of the module comment for a path that takes no list
/// query; `Some` when they answer the request already (`OPTIONS`).
fn check_method_and_query(
    req: &Request<'_>,
    methods: &[Method],
    query: &Query,
) -> Result<Option<Response>, ApiError> {
    if let Some(answered) = check_method(req, methods) {
        return answered.map(Some);
    }
    // A path that takes no query takes no parameter but `_delay` and the
    // cache-buster `_`.
    delay(query)?;
    let pairs = query.as_ref().map_err(Clone::clone)?;
    let other = pairs
        .iter()
        .find(|(name, _)| name != "_delay" && name != "_");
    if let Some((name, _)) = other {
        if let Some(relations) = query::relations(name) {
            return Err(relations);
        }
        return Err(ApiError::BadRequest {
            detail: format!(
                "unknown query parameter '{name}': this path takes no query parameters"
            ),
            hint: Some("remove the query string".into()),
        });
    }
    if req.method == Method::Options {
        return Ok(Some(options(methods)));
    }
    Ok(None)
}

/// Checks 3 and 4: `Some` with 405 for a method the path does not take,
/// or with the answer to a CORS preflight.
fn check_method(req: &Request<'_>, methods: &[Method]) -> Option<Result<Response, ApiError>> {
    if req.is_preflight() {
        return Some(Ok(options(methods)));
    }
    let known = req.method == Method::Options || methods.contains(&req.method);
    (!known).then(|| {
        Err(ApiError::MethodNotAllowed {
            method: req.method_name.to_string(),
            allow: allow(methods),
            hint: None,
        })
    })
}

/// The answer to `OPTIONS`: what the path allows (RFC 9110 section 9.3.7).
fn options(methods: &[Method]) -> Response {
    Response::empty(204).with_header("Allow", allow(methods))
}

/// The `Allow` field value for a path's methods.
fn allow(methods: &[Method]) -> &'static str {
    match methods.len() {
        2 => "GET, HEAD, OPTIONS",
        3 if methods.contains(&Method::Delete) => "GET, HEAD, DELETE, OPTIONS",
        3 => "GET, HEAD, POST, OPTIONS",
        4 => "GET, HEAD, POST, DELETE, OPTIONS",
        _ => "GET, HEAD, PUT, PATCH, DELETE, OPTIONS",
    }
}

/// The path's segments, for the routing table. One trailing slash is
/// allowed (`/api/todos/`); an absolute-form target (`http://host/api`,
/// RFC 9112 section 3.2.2) is routed by its path; a target that is no path
/// (`*`) has none. No route has more than three segments, so at most four
/// are kept (a fourth one only says that there are more): an array, not a
/// `Vec`, since this runs for every request.
fn segments(path: &str) -> ([&str; 4], usize) {
    let path = if path.starts_with('/') {
        path
    } else {
        let rest = path.split_once("://").map(|(_, rest)| rest);
        rest.map_or(path, |rest| {
            rest.find('/').map_or("", |slash| &rest[slash..])
        })
    };
    let mut parts = [""; 4];
    let mut count = 0;
    if let Some(path) = path.strip_prefix('/') {
        for (part, segment) in parts
            .iter_mut()
            .zip(path.strip_suffix('/').unwrap_or(path).split('/'))
        {
            *part = segment;
            count += 1;
        }
    }
    (parts, count)
}

/// The `_delay` parameter of an `/api` request: milliseconds, 0 to
/// 10,000, at most once. `None` when absent.
fn delay(query: &Query) -> Result<Option<Duration>, ApiError> {
    let mut delay = None;
    for (name, value) in query.as_ref().map_err(Clone::clone)? {
        if name != "_delay" {
            continue;
        }
        if delay.is_some() {
            return Err(repeated("_delay"));
        }
        let ms = parse_decimal(value).filter(|ms| *ms <= MAX_DELAY_MS);
        let why = || format!("'{value}' is not a number of milliseconds from 0 to {MAX_DELAY_MS}");
        delay = Some(Duration::from_millis(
            ms.ok_or_else(|| bad("_delay", why()))?,
        ));
    }
    Ok(delay)
}

/// A JSON response with the representation's entity tag.
fn json(status: u16, rendered: Rendered) -> Response {
    let Rendered { body, etag } = rendered;
    Response::bytes(status, JSON, Body::Shared(body)).with_header("ETag", etag)
}

/// 304 with the tag when `If-None-Match` matches it (GET and HEAD): `*`, or
/// any listed tag, weak or not (weak comparison, RFC 9110 section 13.1.2);
/// 400 when the field is malformed (`http/conditional.rs`).
fn not_modified(req: &Request<'_>, etag: &str) -> Result<Option<Response>, ApiError> {
    let Some(header) = req.header("If-None-Match") else {
        return Ok(None);
    };
    let hit = Condition::parse("If-None-Match", header)?.matches_weak(etag);
    Ok(hit.then(|| Response::empty(304).with_header("ETag", etag.to_string())))
}

/// `If-Match` (RFC 9110 section 13.1.1) on an existing item: without it,
/// anything goes; with it, `*`, or exactly the item's current tag (strong
/// comparison: a weak tag never matches); 400 when the field is malformed.
fn precondition<T: Stored>(if_match: Option<&str>, item: &T) -> Result<(), ApiError> {
    let Some(header) = if_match else {
        return Ok(());
    };
    let condition = Condition::parse("If-Match", header)?;
    if condition.matches_strong(&render(item)?.etag) {
        return Ok(());
    }
    Err(ApiError::PreconditionFailed {
        detail: format!(
            "If-Match: {header} does not match the current version of {} {}",
            T::KIND,
            item.id()
        ),
    })
}

/// The 404 for a well-formed id that names no item.
fn missing<T: Stored>(id: u64) -> ApiError {
    ApiError::not_found(format!("no {} with id {id}", T::KIND))
}

#[cfg(test)]
mod tests;
