//! The application: what answers a request once the transport has read it.
//! The routing table, the order of checks, and the handlers of the
//! collections and their items. What [`App`] holds is `setup.rs`'s.
//!
//! # The routing table
//!
//! A request is routed once, here, in two steps: [`target`] reads the
//! path into the resource it names (a [`Target`]), then [`App::route`]
//! matches the method against it (a [`Route`]). 404, 405 with `Allow`, and
//! the answer to `OPTIONS` all come from these two tables; no other code
//! looks at the path. A `Target` also says which checks apply to it.
//!
//! # The order of checks
//!
//! [`App::check`] runs the checks in a fixed order, numbered in its code:
//! the token, failure on purpose, an item's id, the path and the method,
//! the query ([`Query`], decoded once; [`check_query`]), `Accept`, and
//! last the handler. The first that fails answers, before anything
//! changes. What each check refuses, with its status, and why in that
//! order, is told once, for the clients who meet it, in docs/api.md
//! ("The order of checks").
//!
//! Then come the delay, CORS (`cors.rs`) and the request log
//! (`record.rs`). A feature that is off runs none of its code: an
//! `Option` or a value tested once in [`App::handle`].

use std::time::Duration;

use crate::config::Cors;
use crate::error::ApiError;
use crate::http::conditional::Condition;
use crate::http::prefer::{Return, return_preference};
use crate::http::{Body, Handler, JSON, Method, Request, Response, accepts_json, query_pairs};
use crate::model::query::{self, ListQuery};
use crate::model::{MAX_SAFE_INTEGER, Resource as _, Todo, Widget, parse_decimal};
use crate::store::{Listed, Rendered, Stored, render};

mod auth;
mod cors;
mod events;
mod faults;
mod index;
mod openapi;
mod query_check;
mod record;
mod setup;

pub use cors::EXPOSED;
pub use openapi::OPENAPI;
pub use setup::{App, Options};

impl Handler for App {
    /// One request to its response: the resource its target names, the
    /// checks and the handler ([`App::check`]), an error as its problem
    /// document, then the delay and CORS; with `--record`, the exchange
    /// recorded. Never fails.
    fn handle(&self, req: &mut Request<'_>) -> Response {
        let started = self.recorder.is_some().then(record::Started::now);
        let (target, query) = target(req.target);
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
        // With CORS on, every response depends on `Origin` (`cors.rs`).
        if !matches!(self.options.cors, Cors::Off) {
            response.vary("Origin");
            if let Some(origin) = req.header("Origin") {
                self.cors(req, origin, &mut response);
            }
        }
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
    /// handling panicked: the problem document, with CORS as in `handle`.
    fn refuse(&self, req: &Request<'_>, error: ApiError) -> Response {
        let mut response = Response::from(error);
        if !matches!(self.options.cors, Cors::Off) {
            response.vary("Origin");
            if let Some(origin) = req.header("Origin") {
                self.cors(req, origin, &mut response);
            }
        }
        if let Some(recorder) = &self.recorder
            && !target(req.target).0.in_admin()
        {
            let started = record::Started::now();
            recorder.add(req, req.body_read.clone(), &response, started);
        }
        response
    }
}

/// A collection, as the routing table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Collection {
    Widgets,
    Todos,
}

impl Collection {
    /// Its name, as in its path.
    fn name(self) -> &'static str {
        match self {
            Collection::Widgets => Widget::COLLECTION,
            Collection::Todos => Todo::COLLECTION,
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
    Collection(Collection),
    /// An item, by the id as the path spells it (check 3 reads it).
    Item(Collection, &'a str),
    Requests,
    Request(&'a str),
    /// No resource, under `/api`; `true` when the path looks like a
    /// collection or an item this server does not keep (`/api/posts/1`).
    NoneInApi(bool),
    /// No resource, under `/_admin`.
    NoneInAdmin,
    /// A collection's path outside `/api` (`/todos`, `/widgets/7`, as
    /// json-server serves them): no resource, and a hint.
    Misplaced(&'a str, Option<&'a str>),
    /// No resource; `true` when the path looks like another collection
    /// or its item (`/posts`: json-server serves any of its file).
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

/// The routing table's first half: the resource a request target names,
/// and its query. The target is split at its first `?` (RFC 9112 section
/// 3.2); the path is read by segments. One trailing slash is allowed
/// (`/api/todos/`); an absolute-form target (`http://host/api`, section
/// 3.2.2) is routed by its path; a target that is no path (`*`) has none.
/// No resource has more than three segments, so at most four are kept (a
/// fourth one only says that there are more).
fn target(target: &str) -> (Target<'_>, &str) {
    use Collection::{Todos, Widgets};
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
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
    let resource = match parts[..count] {
        [""] => Target::Home,
        ["healthz"] => Target::Health,
        ["api"] => Target::Index,
        ["api", "openapi.json"] => Target::OpenApi,
        ["api", "events"] => Target::Events,
        ["api", "todos"] => Target::Collection(Todos),
        ["api", "todos", id] => Target::Item(Todos, id),
        ["api", "widgets"] => Target::Collection(Widgets),
        ["api", "widgets", id] => Target::Item(Widgets, id),
        ["api", ref rest @ ..] => Target::NoneInApi(index::looks_like_collection(rest)),
        ["_admin", "requests"] => Target::Requests,
        ["_admin", "requests", id] => Target::Request(id),
        ["_admin", ..] => Target::NoneInAdmin,
        [name @ ("todos" | "widgets")] => Target::Misplaced(name, None),
        [name @ ("todos" | "widgets"), id] => Target::Misplaced(name, Some(id)),
        ref rest => Target::Nothing(index::looks_like_collection(rest)),
    };
    (resource, query)
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
    List(Collection),
    Create(Collection),
    Reset(Collection),
    Get(Collection),
    Update(Collection),
    Patch(Collection),
    Delete(Collection),
    Requests(&'a record::Recorder),
    ClearRequests(&'a record::Recorder),
    Request(&'a record::Recorder, &'a str),
}

impl App {
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
            (Get | Head, Target::Collection(collection)) => Route::List(collection),
            (Post, Target::Collection(collection)) if writes => Route::Create(collection),
            (Delete, Target::Collection(collection)) if reset => Route::Reset(collection),
            (Get | Head, Target::Item(collection, _)) => Route::Get(collection),
            (Put, Target::Item(collection, _)) if writes => Route::Update(collection),
            (Patch, Target::Item(collection, _)) if writes => Route::Patch(collection),
            (Delete, Target::Item(collection, _)) if writes => Route::Delete(collection),
            (Get | Head, Target::Requests) => Route::Requests(log?),
            (Delete, Target::Requests) => Route::ClearRequests(log?),
            (Get | Head, Target::Request(id)) => Route::Request(log?, id),
            _ => return None,
        })
    }

    /// The checks, numbered in the order docs/api.md tells them; the last,
    /// 7, is the route's handler, with the item's id (check 3) and the
    /// list query (check 5) it takes.
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
        // 3. An item's id: a positive integer in decimal digits.
        let id = match target {
            Target::Item(collection, id) => match parse_decimal(id) {
                Some(n) if (1..=MAX_SAFE_INTEGER).contains(&n) => n,
                _ => return Err(not_an_id(collection, id)),
            },
            _ => 0,
        };
        // 4. The path and the method.
        let Some(route) = self.route(req.method, target) else {
            return self.not_routed(req, target, query);
        };
        // 5. The query (none: a list's default).
        let list = match &query.error {
            Some(error) => return Err(error.clone()),
            None if query.pairs.is_empty() => None,
            None => check_query(Some(route), &query.pairs)?,
        };
        // 6. `Accept`, when sent (`/` also serves HTML: `index.rs`).
        match (route, req.header("Accept")) {
            (Route::Home, _) | (_, None) => {}
            (Route::Events, Some(accept)) => events::check_accept(accept)?,
            (_, Some(accept)) if !accepts_json(accept) => return Err(ApiError::NotAcceptable),
            _ => {}
        }
        // 7. The handler.
        let pairs = &query.pairs;
        match route {
            Route::Home => self.home(req),
            Route::Index => Ok(index::index()),
            Route::Health => self.health(),
            Route::OpenApi => self.openapi(req),
            Route::Events => self.events(req, pairs),
            Route::List(Collection::Todos) => self.list::<Todo>(req, list),
            Route::List(Collection::Widgets) => self.list::<Widget>(req, list),
            Route::Create(Collection::Todos) => self.create::<Todo>(req),
            Route::Create(Collection::Widgets) => self.create::<Widget>(req),
            Route::Reset(Collection::Todos) => self.reset::<Todo>(),
            Route::Reset(Collection::Widgets) => self.reset::<Widget>(),
            Route::Get(Collection::Todos) => self.get::<Todo>(req, id),
            Route::Get(Collection::Widgets) => self.get::<Widget>(req, id),
            Route::Update(Collection::Todos) => self.update::<Todo>(req, id, false),
            Route::Update(Collection::Widgets) => self.update::<Widget>(req, id, false),
            Route::Patch(Collection::Todos) => self.update::<Todo>(req, id, true),
            Route::Patch(Collection::Widgets) => self.update::<Widget>(req, id, true),
            Route::Delete(Collection::Todos) => self.delete::<Todo>(req, id),
            Route::Delete(Collection::Widgets) => self.delete::<Widget>(req, id),
            Route::Requests(log) => record::requests(log, pairs),
            Route::ClearRequests(log) => Ok(record::clear(log)),
            Route::Request(log, id) => record::request(log, id),
        }
    }
}

/// A request's query string, decoded once. A query that does not decode,
/// or whose `_delay` is not valid, is 400 at check 5 (or at check 2, which
/// reads it first when failure on purpose is on).
struct Query {
    /// The parameters, in order; none when the query does not decode.
    pairs: Vec<(String, String)>,
    /// `_delay`, when the query names it.
    delay: Option<Duration>,
    /// Why the query is refused, if it is.
    error: Option<ApiError>,
}

impl Query {
    /// A request without a query.
    const NONE: Query = Query {
        pairs: Vec::new(),
        delay: None,
        error: None,
    };

    /// `query`, decoded ([`query_pairs`]); `_delay` is read only when a
    /// parameter has that name.
    fn decode(query: &str) -> Query {
        let (pairs, mut error) = match query_pairs(query) {
            Ok(pairs) => (pairs, None),
            Err(error) => (Vec::new(), Some(error)),
        };
        let mut delay = None;
        for (name, _) in &pairs {
            if name == "_delay" {
                match query_check::delay(&pairs) {
                    Ok(asked) => delay = asked,
                    Err(refused) => error = Some(refused),
                }
                break;
            }
        }
        Query {
            pairs,
            delay,
            error,
        }
    }

    /// The parameters, or the 400 when the query is refused.
    fn pairs(&self) -> Result<&[(String, String)], ApiError> {
        self.error.clone().map_or(Ok(&self.pairs), Err)
    }
}

/// Check 5: the query, as the route takes it (for a plain `OPTIONS`, as
/// its `GET` would): a collection's list query, parsed for the handler
/// (`model/query.rs`); the change feed's (`events.rs`) and the request
/// log's filters (`record.rs`), checked; any other route takes nothing but
/// `_delay` and `_`, a cache-buster (`query_check.rs`).
fn check_query(
    route: Option<Route<'_>>,
    pairs: &[(String, String)],
) -> Result<Option<ListQuery>, ApiError> {
    match route {
        Some(Route::List(Collection::Todos)) => return query::parse::<Todo>(pairs).map(Some),
        Some(Route::List(Collection::Widgets)) => return query::parse::<Widget>(pairs).map(Some),
        Some(Route::Events) => {
            events::Query::parse(pairs)?;
        }
        Some(Route::Requests(_)) => {
            record::Filter::parse(pairs)?;
        }
        _ => query_check::takes_none(pairs)?,
    }
    Ok(None)
}

impl App {
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
        let mut response = json(200, rendered);
        let headers = &mut response.headers;
        headers.push(("X-Total-Count", total.to_string().into()));
        if let Some(link) = query.link(&format!("/api/{}", T::COLLECTION), total) {
            headers.push(("Link", link.into()));
        }
        if query.simple_rest
            && let Some(range) = query.content_range(T::COLLECTION, total)
        {
            headers.push(("Content-Range", range.into()));
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
        let mut response = json(201, rendered);
        response.headers.push(("Location", location.into()));
        Ok(response)
    }

    /// `DELETE /api/{collection}` with `--allow-reset`: every item gone.
    fn reset<T: Stored>(&self) -> Result<Response, ApiError> {
        self.store.clear::<T>()?;
        Ok(Response::empty(204))
    }

    /// `PUT` and `PATCH /api/{collection}/{id}`: both merge the fields sent
    /// into the item (docs/api.md, "The resources"); PATCH also takes
    /// merge-patch+json. With `If-Match`, only while the item is still the
    /// version named.
    fn update<T: Stored>(
        &self,
        req: &mut Request<'_>,
        id: u64,
        merge_patch: bool,
    ) -> Result<Response, ApiError> {
        // An unknown id is 404 whatever the body or If-Match (RFC 9110
        // section 13.2.1), so a body in error asks whether the item is
        // there. Then If-Match, under the lock that changes the item.
        let parsed = match req.fields(merge_patch, T::EXAMPLE) {
            Ok(fields) => T::parse_patch(fields, id),
            Err(error) => Err(error),
        };
        let patch = match parsed {
            Ok(patch) => patch,
            Err(_) if !self.store.contains::<T>(id) => return Err(missing::<T>(id)),
            Err(error) => return Err(error),
        };
        let if_match = req.header("If-Match");
        let check = |item: &T| match if_match {
            Some(header) => precondition(header, item),
            None => Ok(()),
        };
        let updated = self
            .store
            .update::<T>(id, check, |item| item.apply(patch))?;
        let rendered = updated.ok_or_else(|| missing::<T>(id))?;
        Ok(json(200, rendered))
    }

    /// `DELETE /api/{collection}/{id}`: 200 with the item deleted, as
    /// json-server does and as its clients read (`fetch(...).then(r =>
    /// r.json())`, react-admin's providers), or 404 when already gone;
    /// with `If-Match`, only while the item is still the version named.
    /// `Prefer: return=minimal` (RFC 7240) gets 204 (RFC 9110 section
    /// 9.3.5 allows either), and `Preference-Applied` says so.
    fn delete<T: Stored>(&self, req: &Request<'_>, id: u64) -> Result<Response, ApiError> {
        let if_match = req.header("If-Match");
        let check = |item: &T| match if_match {
            Some(header) => precondition(header, item),
            None => Ok(()),
        };
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

/// Check 3's 404: an id that is not a positive integer in decimal digits.
fn not_an_id(collection: Collection, id: &str) -> ApiError {
    ApiError::not_found(format!(
        "'{id}' is not a {} id: ids are positive integers like 1 or 42",
        collection.name().trim_end_matches('s')
    ))
}

/// A JSON response with its entity tag.
fn json(status: u16, rendered: Rendered) -> Response {
    let Rendered { body, etag } = rendered;
    let mut response = Response::bytes(status, JSON, Body::Shared(body));
    response.headers.push(("ETag", etag.into()));
    response
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

/// `If-Match` (RFC 9110 section 13.1.1) on an existing item, when sent
/// (without it, anything goes): `*`, or exactly the item's current tag
/// (strong comparison: a weak tag never matches); 400 when the field is
/// malformed.
fn precondition<T: Stored>(header: &str, item: &T) -> Result<(), ApiError> {
    let condition = Condition::parse("If-Match", header)?;
    if condition.matches_strong(&render(item)?.etag) {
        return Ok(());
    }
    Err(ApiError::PreconditionFailed {
        detail: format!(
            "If-Match: {header} does not match the current version of {} {}",
            T::ITEM,
            item.id()
        ),
    })
}

/// The 404 for a well-formed id that names no item.
fn missing<T: Stored>(id: u64) -> ApiError {
    ApiError::not_found(format!("no {} with id {id}", T::ITEM))
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
