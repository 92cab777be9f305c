//! The application: what answers a request once the transport has read it.
//! The routing table, the order of checks, and the handlers of the
//! collections and their items.
//!
//! # The routing table
//!
//! A request is routed once, here, in two steps: [`target`] reads the path
//! into the resource it names (a [`Target`]), then [`App::route`] matches
//! the method against it (a [`Route`]). 404, 405 with `Allow`, and the
//! answer to `OPTIONS` all come from these two tables; no other code looks
//! at the path. A `Target` also says which checks apply to it: the token
//! ([`Target::in_api`], [`Target::in_admin`]), failure on purpose
//! ([`Target::fails_on_purpose`]), the delay.
//!
//! # The order of checks
//!
//! [`App::check`] runs the checks, each answering with an error before
//! anything later is looked at (and before anything changes):
//!
//! 1. with `--auth-token`, on `/api` and (with `--record`) `/_admin`, for
//!    every method but `OPTIONS`: the bearer token, else 401 (so that,
//!    without the token, not even which paths exist is told);
//! 2. with `--faults`, on a collection, an item or `/api/events`, but for
//!    a CORS preflight: failure on purpose (`faults.rs`), before anything
//!    is read or changed;
//! 3. an item's id: one that is not a positive integer is 404;
//! 4. the path and the method, in the routing table: a path that no method
//!    is served at is 404 (`index.rs`: with a hint when it names a
//!    collection outside `/api`); a CORS preflight (`OPTIONS` with
//!    `Access-Control-Request-Method`) is answered here, whatever its
//!    query (the browser sends the URL of the request it asks about); any
//!    other method the path does not take is 405 with `Allow`;
//! 5. the query, decoded once per request: a collection's GET, HEAD and
//!    OPTIONS take a list query (`model/query.rs`), `/api/events` its own,
//!    `/_admin/requests` its filters (`record.rs`), other paths nothing but
//!    `_delay` and `_` (a cache-buster, ignored); any error is 400; then a
//!    plain `OPTIONS` is answered;
//! 6. `Accept` must admit JSON, else 406 (`/` also serves HTML);
//! 7. the handler. PUT, PATCH and DELETE: a missing item is 404; then for a
//!    body, its size (413), media type (415), syntax (400) and validation
//!    (422); then, under the store's lock, `If-Match` (400 when malformed,
//!    412 when no tag matches); POST: the store may be full (507). GET and
//!    HEAD: 304 for a matching `If-None-Match` (400 when malformed).
//!
//! Every response, errors included, then gets its CORS header fields
//! (`cors.rs`), and an `/api` response the delay of `_delay` or `--delay`.
//! The index routes (`/`, `/api`, `/healthz`, the OpenAPI document) are
//! answered in `index.rs`; the OpenAPI document itself, made for the
//! configuration, is `openapi.rs`'s. With `--record N`, each exchange is
//! then recorded, and `/_admin/requests` shows the last N (`record.rs`).
//!
//! A feature that is off runs none of its code: failure on purpose and the
//! request log are an `Option` tested once, and `--delay` a zero tested
//! once; `_delay` is read only when a parameter of the query has that name.
//! With `--faults` off, `_status` and `_fault` are unknown parameters, so
//! the request fails a check; only then does `faults.rs` turn that error
//! into one that says how to turn failure on purpose on.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::config::{self, Config, Cors, Secret};
use crate::error::ApiError;
use crate::health::Health;
use crate::http::conditional::Condition;
use crate::http::prefer::{Return, return_preference};
use crate::http::{Body, Handler, JSON, Method, Request, Response};
use crate::model::query::ListQuery;
use crate::model::{MAX_SAFE_INTEGER, Resource as _, Todo, Widget, parse_decimal};
use crate::store::{Listed, Rendered, Store, Stored, render};

mod auth;
mod cors;
mod events;
mod faults;
mod index;
mod openapi;
mod query;
mod record;

use query::Query;

pub use cors::EXPOSED;

/// The OpenAPI 3.1 document describing this API with every feature on, as
/// the repository holds it; `openapi.rs` makes the one served, from a
/// compact copy (build.rs), so the binary holds only that one.
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
    /// One request to its response: the resource its path names, the
    /// checks and the handler ([`App::check`]), an error as its problem
    /// document, then CORS and the delay; with `--record`, the exchange
    /// recorded. Never fails.
    fn handle(&self, req: &mut Request<'_>) -> Response {
        let started = self.recorder.is_some().then(record::Started::now);
        let (path, query) = req.path_and_query();
        let target = target(path);
        let query = match query {
            "" => Query::NONE,
            query => Query::decode(query),
        };
        let mut response = match self.check(req, target, &query) {
            Ok(response) => response,
            Err(error) if self.faults.is_none() && target.fails_on_purpose() => {
                Response::from(faults::hint_when_off(error, &query.pairs))
            }
            Err(error) => Response::from(error),
        };
        response.probe = matches!(target, Target::Health);
        let delay = query.delay.unwrap_or(self.options.delay);
        if !delay.is_zero() && target.in_api() {
            response.delay = delay;
        }
        let response = self.cors(req, response);
        if let (Some(recorder), Some(started)) = (&self.recorder, started)
            && !target.in_admin()
        {
            let body = req.body_read.take();
            recorder.add(req, body, &response, started);
        }
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
        if let Some(recorder) = &self.recorder
            && !target(req.path()).in_admin()
        {
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

impl Kind {
    /// The collection's name, as in its path.
    fn name(self) -> &'static str {
        match self {
            Kind::Widgets => Widget::COLLECTION,
            Kind::Todos => Todo::COLLECTION,
        }
    }
}

/// The resource a path names (RFC 9110 section 7.1's target resource):
/// the routing table's first half, [`target`]'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target<'a> {
    Home,
    Health,
    Index,
    OpenApi,
    Events,
    Collection(Kind),
    /// An item, by the id as the path spells it (check 3 reads it).
    Item(Kind, &'a str),
    Requests,
    Request(&'a str),
    /// No resource, under `/api`; `true` when the path looks like a
    /// collection or an item this server does not keep (`/api/posts/1`).
    NoneInApi(bool),
    /// No resource, under `/_admin`.
    NoneInAdmin,
    /// A collection's path outside `/api` (`/todos`, `/widgets/7`, where
    /// json-server serves them), by its collection and id: no resource,
    /// and a hint.
    Misplaced(&'a str, Option<&'a str>),
    /// No resource; `true` when the path looks like another collection
    /// or its item (`/posts`, as json-server serves any collection of its
    /// file).
    Nothing(bool),
}

impl Target<'_> {
    /// Under `/api`: the token is asked for, and the delay applies.
    fn in_api(self) -> bool {
        use Target::*;
        matches!(
            self,
            Index | OpenApi | Events | Collection(_) | Item(..) | NoneInApi(_)
        )
    }

    /// Under `/_admin`: the request log's, never recorded itself; the
    /// token is asked for while the log is on.
    fn in_admin(self) -> bool {
        use Target::*;
        matches!(self, Requests | Request(_) | NoneInAdmin)
    }

    /// A collection, an item, or the change feed: what `--faults` fails.
    fn fails_on_purpose(self) -> bool {
        use Target::*;
        matches!(self, Collection(_) | Item(..) | Events)
    }
}

/// The routing table's first half: the resource `path` names, read by
/// segments. One trailing slash is allowed (`/api/todos/`); an
/// absolute-form target (`http://host/api`, RFC 9112 section 3.2.2) is
/// routed by its path; a target that is no path (`*`) has none. No
/// resource has more than three segments, so at most four are kept (a
/// fourth one only says that there are more).
fn target(path: &str) -> Target<'_> {
    use Kind::{Todos, Widgets};
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
    match parts[..count] {
        [""] => Target::Home,
        ["healthz"] => Target::Health,
        ["api"] => Target::Index,
        ["api", "openapi.json"] => Target::OpenApi,
        ["api", "events"] => Target::Events,
        ["api", "todos"] => Target::Collection(Todos),
        ["api", "todos", id] => Target::Item(Todos, id),
        ["api", "widgets"] => Target::Collection(Widgets),
        ["api", "widgets", id] => Target::Item(Widgets, id),
        ["api", ref rest @ ..] => Target::NoneInApi(looks_like_collection(rest)),
        ["_admin", "requests"] => Target::Requests,
        ["_admin", "requests", id] => Target::Request(id),
        ["_admin", ..] => Target::NoneInAdmin,
        [name @ ("todos" | "widgets")] => Target::Misplaced(name, None),
        [name @ ("todos" | "widgets"), id] => Target::Misplaced(name, Some(id)),
        ref rest => Target::Nothing(looks_like_collection(rest)),
    }
}

/// Whether the rest of a path no resource matched looks like a collection
/// or an item this server does not keep: one or two segments, the first a
/// word (not `_admin`), none of them a file name (`/favicon.ico`).
fn looks_like_collection(rest: &[&str]) -> bool {
    matches!(rest.len(), 1 | 2)
        && rest[0].starts_with(|c: char| c.is_ascii_alphabetic())
        && !rest.iter().any(|segment| segment.contains('.'))
}

/// What a request asks for: the routing table's answer. The request
/// log's routes carry it: they are served only while it is on.
#[derive(Clone, Copy)]
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
    Requests(&'a record::Recorder),
    ClearRequests(&'a record::Recorder),
    Request(&'a record::Recorder, &'a str),
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

    /// The routing table's second half: the route of `method` at `target`,
    /// if this configuration serves it (a write needs the server not
    /// `--read-only`, a reset also `--allow-reset`, the request log's
    /// routes `--record`). `None` is check 4's 404, 405 or `OPTIONS`: see
    /// [`App::not_routed`] (docs/api.md says why 405 for a read-only
    /// server's writes).
    fn route<'a>(&'a self, method: Method, target: Target<'a>) -> Option<Route<'a>> {
        use Method::{Delete, Get, Head, Patch, Post, Put};
        let writes = !self.options.read_only;
        let reset = writes && self.options.allow_reset;
        let log = self.recorder.as_ref();
        Some(match (method, target) {
            (Get | Head, Target::Home) => Route::Home,
            (Get | Head, Target::Index) => Route::Index,
            (Get | Head, Target::Health) => Route::Health,
            (Get | Head, Target::OpenApi) => Route::OpenApi,
            (Get | Head, Target::Events) => Route::Events,
            (Get | Head, Target::Collection(kind)) => Route::List(kind),
            (Post, Target::Collection(kind)) if writes => Route::Create(kind),
            (Delete, Target::Collection(kind)) if reset => Route::Reset(kind),
            (Get | Head, Target::Item(kind, _)) => Route::Get(kind),
            (Put, Target::Item(kind, _)) if writes => Route::Update(kind),
            (Patch, Target::Item(kind, _)) if writes => Route::Patch(kind),
            (Delete, Target::Item(kind, _)) if writes => Route::Delete(kind),
            (Get | Head, Target::Requests) => Route::Requests(log?),
            (Delete, Target::Requests) => Route::ClearRequests(log?),
            (Get | Head, Target::Request(id)) => Route::Request(log?, id),
            _ => return None,
        })
    }

    /// The checks of the module comment, in its order, then the handler.
    fn check(
        &self,
        req: &mut Request<'_>,
        target: Target<'_>,
        query: &Query,
    ) -> Result<Response, ApiError> {
        // 1. The token.
        if let Some(token) = &self.options.auth_token {
            self.authorize(token, req, target)?;
        }
        // 2. Failure on purpose.
        if let Some(faults) = &self.faults
            && target.fails_on_purpose()
            && !req.is_preflight()
            && let Some(failed) = faults.check(query.pairs()?)?
        {
            return Ok(failed);
        }
        // 3. An item's id.
        let id = match target {
            Target::Item(kind, id) => item_id(kind, id)?,
            _ => 0,
        };
        // 4. The path and the method.
        let Some(route) = self.route(req.method, target) else {
            return self.not_routed(req, target, query);
        };
        // 5. The query (none: a list's default, every item by id).
        let list = match query.pairs.is_empty() && query.error.is_none() {
            true => None,
            false => self.check_query(req.method, target, query)?,
        };
        // 6. `Accept` (`/` also serves HTML: `index.rs` negotiates).
        match route {
            Route::Home => {}
            Route::Events => events::check_accept(req)?,
            _ => req.check_accept()?,
        }
        // 7. The handler.
        self.dispatch(route, req, id, list, &query.pairs)
    }

    /// Check 7: the handler of the route, with the item's id (check 3) and
    /// the list query (check 5) it takes.
    fn dispatch(
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
            Route::Requests(log) => record::requests(log, pairs),
            Route::ClearRequests(log) => Ok(record::clear(log)),
            Route::Request(log, id) => record::request(log, id),
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
        if query.simple_rest
            && let Some(range) = query.content_range(T::COLLECTION, total)
        {
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

    /// `DELETE /api/{collection}/{id}`: 200 with the item deleted, as
    /// json-server does and as its clients read (`fetch(...).then(r =>
    /// r.json())`, react-admin's providers), or 404 when already gone;
    /// with `If-Match`, only while the item is still the version named.
    /// `Prefer: return=minimal` (RFC 7240) gets 204 (RFC 9110 section
    /// 9.3.5 allows either), and `Preference-Applied` says so.
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

/// Check 3: an item's id, in the path of its collection: a positive
/// integer in decimal digits, else 404.
fn item_id(kind: Kind, id: &str) -> Result<u64, ApiError> {
    match parse_decimal(id) {
        Some(n) if (1..=MAX_SAFE_INTEGER).contains(&n) => Ok(n),
        _ => Err(ApiError::not_found(format!(
            "'{id}' is not a {} id: ids are positive integers like 1 or 42",
            kind.name().trim_end_matches('s')
        ))),
    }
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
