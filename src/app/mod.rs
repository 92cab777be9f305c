//! The application: what answers a request once the transport has read it.
//! The routing table, the order of checks, and the handlers of the
//! collections and their items.
//!
//! # The order of checks
//!
//! [`route`] matches the method and the path together, in one table. Then
//! [`App::answer`] runs the checks, each answering with an error before
//! anything later is looked at (and before anything changes):
//!
//! 1. with `--auth-token`, on `/api` and (with `--record`) `/_admin`, for
//!    every method but `OPTIONS`: the bearer token, else 401 (so that,
//!    without the token, not even which paths exist is told);
//! 2. the path: one that no method is served at is 404 (`index.rs`: with a
//!    hint when it names a collection outside `/api`);
//! 3. with `--faults`, on a collection or an item, but for a CORS
//!    preflight: failure on purpose (`faults.rs`), before anything is read
//!    or changed;
//! 4. an item's id: one that is not a positive integer is 404;
//! 5. the method: a CORS preflight (`OPTIONS` with
//!    `Access-Control-Request-Method`) is answered here, whatever its
//!    query (the browser sends the URL of the request it asks about); any
//!    other method the path does not take is 405 with `Allow`;
//! 6. the query: a collection's GET, HEAD and OPTIONS take a list query
//!    (`model/query.rs`), `/_admin/requests` its filters (`record.rs`),
//!    other paths nothing but `_delay` and `_` (a cache-buster, ignored);
//!    any error is 400; then a plain `OPTIONS` is answered;
//! 7. `Accept` must admit JSON, else 406 (`/` also serves HTML);
//! 8. the handler. PUT, PATCH and DELETE: a missing item is 404; then for a
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
//! (`cors.rs`), and an `/api` response the delay of `_delay` or `--delay`.
//! The index routes (`/`, `/api`, `/healthz`, the OpenAPI document) are
//! answered in `index.rs`; the OpenAPI document itself, made for the
//! configuration, is `openapi.rs`'s. With `--record N`, each exchange is
//! then recorded, and `/_admin/requests` shows the last N (`record.rs`).
//! A feature that is off costs a request one test of an `Option` or a
//! `bool`, and none of its code runs.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::config::{self, Config, Cors, Secret};
use crate::error::ApiError;
use crate::health::Health;
use crate::http::conditional::Condition;
use crate::http::prefer::{Return, return_preference};
use crate::http::{Body, Handler, JSON, Method, Request, Response, query_pairs};
use crate::model::query::ListQuery;
use crate::model::{MAX_SAFE_INTEGER, Todo, Widget, parse_decimal};
use crate::store::{Listed, Rendered, Store, Stored, render};

mod auth;
mod cors;
mod events;
mod faults;
mod index;
mod openapi;
mod query;
mod record;

pub use cors::EXPOSED;

/// The OpenAPI 3.1 document describing this API with every feature on;
/// `openapi.rs` makes the one served.
pub const OPENAPI: &[u8] = include_bytes!("openapi.json");

/// The application: the store, and the options that change what it does.
pub struct App {
    pub store: Store,
    /// What the transport reports for `/healthz`.
    pub health: Arc<Health>,
    options: Options,
    /// With `--faults`: its settings and its count of requests.
    faults: Option<faults::Faults>,
    /// `--record N`: the request log; `None` when off.
    recorder: Option<record::Recorder>,
    /// The OpenAPI document this configuration serves (`openapi.rs`),
    /// made at its first request: making it takes longer than the rest of
    /// the start-up together.
    openapi: OnceLock<openapi::Served>,
}

/// The options of [`App`]: `--allow-reset`, `--read-only`, `--delay`, `--auth-token`, CORS, `--faults`,
/// `--seed`, `--record`, `--max-subscribers`, `--events-kept`.
#[derive(Debug, Clone)]
pub struct Options {
    pub allow_reset: bool,
    pub read_only: bool,
    pub delay: Duration,
    pub auth_token: Option<Secret>,
    pub cors: Cors,
    pub faults: config::faults::FaultSettings,
    pub seed: u64,
    pub record: Option<usize>,
    pub max_subscribers: usize,
    pub events_kept: Option<usize>,
}

impl Default for Options {
    fn default() -> Options {
        Options::from_config(&Config::default())
    }
}

impl Options {
    pub fn from_config(config: &Config) -> Options {
        Options {
            allow_reset: config.allow_reset,
            read_only: config.read_only,
            delay: config.delay,
            auth_token: config.auth_token.clone(),
            cors: config.cors.clone(),
            faults: config.faults.clone(),
            seed: config.seed,
            record: config.record,
            max_subscribers: config.max_subscribers,
            events_kept: config.events_kept,
        }
    }
}

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

    /// Ends every `/api/events` stream: the server is stopping.
    fn stop(&self) {
        self.store.feed().stop();
    }

    /// A request the transport refused (framing it cannot trust) or whose
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

/// A collection, as the routing table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Widgets,
    Todos,
}

/// What a request asks for: the routing table's answer.
#[derive(Debug, Clone, Copy)]
enum Route<'a> {
    Home,
    Index,
    Health,
    OpenApi,
    Events,
    List(Kind),
    Create(Kind),
    Reset(Kind),
    Get(Kind),
    Update(Kind),
    Patch(Kind),
    Delete(Kind),
    Requests,
    ClearRequests,
    Request(&'a str),
}

/// The routing table: method and path together. `None` when no route
/// serves this method at this path; whether another method is served there
/// is [`App::allowed`]'s question.
fn route<'a>(method: Method, segments: &[&'a str]) -> Option<Route<'a>> {
    use Kind::{Todos, Widgets};
    use Method::{Delete, Get, Head, Patch, Post, Put};
    Some(match (method, segments) {
        (Get | Head, [""]) => Route::Home,
        (Get | Head, ["api"]) => Route::Index,
        (Get | Head, ["healthz"]) => Route::Health,
        (Get | Head, ["api", "openapi.json"]) => Route::OpenApi,
        (Get | Head, ["api", "events"]) => Route::Events,
        (Get | Head, ["api", "todos"]) => Route::List(Todos),
        (Post, ["api", "todos"]) => Route::Create(Todos),
        (Delete, ["api", "todos"]) => Route::Reset(Todos),
        (Get | Head, ["api", "todos", _]) => Route::Get(Todos),
        (Put, ["api", "todos", _]) => Route::Update(Todos),
        (Patch, ["api", "todos", _]) => Route::Patch(Todos),
        (Delete, ["api", "todos", _]) => Route::Delete(Todos),
        (Get | Head, ["api", "widgets"]) => Route::List(Widgets),
        (Post, ["api", "widgets"]) => Route::Create(Widgets),
        (Delete, ["api", "widgets"]) => Route::Reset(Widgets),
        (Get | Head, ["api", "widgets", _]) => Route::Get(Widgets),
        (Put, ["api", "widgets", _]) => Route::Update(Widgets),
        (Patch, ["api", "widgets", _]) => Route::Patch(Widgets),
        (Delete, ["api", "widgets", _]) => Route::Delete(Widgets),
        (Get | Head, ["_admin", "requests"]) => Route::Requests,
        (Delete, ["_admin", "requests"]) => Route::ClearRequests,
        (Get | Head, ["_admin", "requests", id]) => Route::Request(id),
        _ => return None,
    })
}

impl App {
    /// The application with every option off.
    pub fn new(store: Store) -> App {
        App::with_options(store, Options::default())
    }

    pub fn with_options(store: Store, options: Options) -> App {
        let health = Arc::default();
        let recorder = options.record.map(record::Recorder::new);
        if let Some(kept) = options.events_kept {
            store.feed().keep(kept);
        }
        store.feed().encode_with(events::encode);
        App {
            store,
            health,
            faults: faults::Faults::new(&options.faults, options.seed),
            options,
            recorder,
            openapi: OnceLock::new(),
        }
    }

    /// The response to a request the transport passed on: the answer,
    /// errors as problem documents, with CORS and the delay.
    fn respond(&self, req: &mut Request<'_>) -> Response {
        let (path, query) = req.path_and_query();
        let (parts, count) = segments(path);
        let segments = &parts[..count];
        let mut response = self
            .answer(req, segments, query)
            .unwrap_or_else(Response::from);
        if segments.first() == Some(&"api") {
            response.delay = self.options.delay;
            if !query.is_empty() {
                let pairs = query_pairs(query).unwrap_or_default();
                if let Ok(Some(delay)) = query::delay(&pairs) {
                    response.delay = delay;
                }
            }
        }
        self.cors(req, response)
    }

    /// The route the table gives, if this configuration serves it: a
    /// reset needs `--allow-reset`, the request log's routes `--record`;
    /// with `--read-only`, no write is served, so `Allow`, `OPTIONS` and
    /// the 405 of a write all come from here (docs/api.md says why 405).
    fn served<'a>(&self, method: Method, segments: &[&'a str]) -> Option<Route<'a>> {
        match route(method, segments)? {
            Route::Create(_)
            | Route::Update(_)
            | Route::Patch(_)
            | Route::Delete(_)
            | Route::Reset(_)
                if self.options.read_only =>
            {
                None
            }
            Route::Reset(_) if !self.options.allow_reset => None,
            Route::Requests | Route::ClearRequests | Route::Request(_)
                if self.recorder.is_none() =>
            {
                None
            }
            route => Some(route),
        }
    }

    /// The methods served at a path, as `Allow` lists them (RFC 9110
    /// section 10.2.1); `None` when no method is.
    fn allowed(&self, segments: &[&str]) -> Option<String> {
        use Method::{Delete, Get, Head, Patch, Post, Put};
        let served: Vec<&str> = [Get, Head, Post, Put, Patch, Delete]
            .into_iter()
            .filter(|&method| self.served(method, segments).is_some())
            .filter_map(Method::name)
            .collect();
        (!served.is_empty()).then(|| format!("{}, OPTIONS", served.join(", ")))
    }

    /// The checks of the module comment, in its order, then the handler.
    fn answer(
        &self,
        req: &mut Request<'_>,
        segments: &[&str],
        query: &str,
    ) -> Result<Response, ApiError> {
        // 1. The token.
        if let Some(token) = &self.options.auth_token {
            self.authorize(token, req, segments)?;
        }
        // 2. The path; the methods it takes when this one is not among them.
        let route = self.served(req.method, segments);
        let allow =
            match route {
                Some(_) => None,
                None => Some(self.allowed(segments).ok_or_else(|| {
                    index::no_route(req.target, segments, self.recorder.is_some())
                })?),
            };
        // 3. Failure on purpose.
        if let ["api", "todos" | "widgets" | "events", ..] = segments {
            if !req.is_preflight() {
                match &self.faults {
                    Some(faults) => {
                        if let Some(failed) = faults.check(query)? {
                            return Ok(failed);
                        }
                    }
                    None if !query.is_empty() => faults::hint_when_off(query)?,
                    None => {}
                }
            }
        }
        // 4. An item's id.
        let id = match segments {
            ["api", collection @ ("todos" | "widgets"), id] => item_id(collection, id)?,
            _ => 0,
        };
        // 5. The method.
        if let Some(allow) = &allow {
            if req.is_preflight() {
                return Ok(options(allow));
            }
            if !matches!(req.method, Method::Options) {
                return Err(self.not_allowed(req, segments, allow));
            }
        }
        // 6. The query.
        let pairs = match query {
            "" => Vec::new(),
            query => query_pairs(query)?,
        };
        let lists = matches!(route, Some(Route::List(_))) || allow.is_some();
        let list = match lists || !pairs.is_empty() {
            true => self.check_query(req.method, segments, &pairs)?,
            false => None,
        };
        if let Some(allow) = &allow {
            return Ok(options(allow));
        }
        // 7. `Accept` (`/` also serves HTML: `index.rs` negotiates).
        // (With no route, `allow` was set and has answered by now.)
        let Some(route) = route else {
            return Err(ApiError::Internal);
        };
        match route {
            Route::Home => {}
            Route::Events => events::check_accept(req)?,
            _ => req.check_accept()?,
        }
        // 8. The handler.
        self.run(route, req, id, list, &pairs)
    }

    /// Check 8: the handler of the route, with the item's id (check 4) and
    /// the list query (check 6) it takes.
    fn run(
        &self,
        route: Route<'_>,
        req: &mut Request<'_>,
        id: u64,
        list: Option<ListQuery>,
        pairs: &[(String, String)],
    ) -> Result<Response, ApiError> {
        match route {
            Route::Home => self.home(req),
            Route::Index => Ok(index::index()),
            Route::Health => self.health(),
            Route::OpenApi => self.openapi(req),
            Route::Events => self.events(req, pairs),
            Route::List(Kind::Todos) => self.list::<Todo>(req, list),
            Route::List(Kind::Widgets) => self.list::<Widget>(req, list),
            Route::Create(Kind::Todos) => self.create::<Todo>(req),
            Route::Create(Kind::Widgets) => self.create::<Widget>(req),
            Route::Reset(Kind::Todos) => self.reset::<Todo>(),
            Route::Reset(Kind::Widgets) => self.reset::<Widget>(),
            Route::Get(Kind::Todos) => self.get::<Todo>(req, id),
            Route::Get(Kind::Widgets) => self.get::<Widget>(req, id),
            Route::Update(Kind::Todos) => self.update::<Todo>(req, id, false),
            Route::Update(Kind::Widgets) => self.update::<Widget>(req, id, false),
            Route::Patch(Kind::Todos) => self.update::<Todo>(req, id, true),
            Route::Patch(Kind::Widgets) => self.update::<Widget>(req, id, true),
            Route::Delete(Kind::Todos) => self.delete::<Todo>(req, id),
            Route::Delete(Kind::Widgets) => self.delete::<Widget>(req, id),
            Route::Requests | Route::ClearRequests | Route::Request(_) => self.admin(route, pairs),
        }
    }

    /// `GET /api/{collection}`: the items the query selects (every item,
    /// ascending id, by default), with `ETag`, `X-Total-Count`, `Link` for
    /// a `_page` query, and `Content-Range` for one in react-admin's
    /// simple-rest dialect (`model/query/simple_rest.rs`).
    fn list<T: Stored>(
        &self,
        req: &Request<'_>,
        query: Option<ListQuery>,
    ) -> Result<Response, ApiError> {
        let query = query.unwrap_or_default();
        let Listed { rendered, total } = self.store.list::<T>(&query)?;
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
        let (item, rendered) = self.store.create::<T>(new)?;
        let location = format!("/api/{}/{}", T::COLLECTION, item.id());
        Ok(json(201, rendered).with_header("Location", location))
    }

    /// `DELETE /api/{collection}` with `--allow-reset`: every item gone.
    fn reset<T: Stored>(&self) -> Result<Response, ApiError> {
        self.store.clear::<T>()?;
        Ok(Response::empty(204))
    }

    /// `PUT` and `PATCH /api/{collection}/{id}`: both merge the fields sent
    /// into the item (docs/api.md, "The resources"); PATCH also takes merge-patch+json.
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
        let (_, rendered) = updated.ok_or_else(|| missing::<T>(id))?;
        Ok(json(200, rendered))
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
}

/// Check 4: an item's id, in the path of `collection`: a positive integer
/// in decimal digits, else 404.
fn item_id(collection: &str, id: &str) -> Result<u64, ApiError> {
    match parse_decimal(id) {
        Some(n) if (1..=MAX_SAFE_INTEGER).contains(&n) => Ok(n),
        _ => Err(ApiError::not_found(format!(
            "'{id}' is not a {} id: ids are positive integers like 1 or 42",
            collection.trim_end_matches('s')
        ))),
    }
}

/// The answer to `OPTIONS`: what the path allows (RFC 9110 section 9.3.7).
fn options(allow: &str) -> Response {
    Response::empty(204).with_header("Allow", allow.to_string())
}

/// The path's segments, for the routing table. One trailing slash is
/// allowed (`/api/todos/`); an absolute-form target (`http://host/api`,
/// RFC 9112 section 3.2.2) is routed by its path; a target that is no path
/// (`*`) has none. No route has more than three segments, so at most four
/// are kept (a fourth one only says that there are more).
fn segments(path: &str) -> ([&str; 4], usize) {
    let path = match path.split_once("://") {
        Some((_, rest)) if !path.starts_with('/') => rest.find('/').map_or("", |at| &rest[at..]),
        _ => path,
    };
    let mut parts = [""; 4];
    let mut count = 0;
    if let Some(path) = path.strip_prefix('/') {
        let path = path.strip_suffix('/').unwrap_or(path);
        for (part, segment) in parts.iter_mut().zip(path.split('/')) {
            *part = segment;
            count += 1;
        }
    }
    (parts, count)
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
