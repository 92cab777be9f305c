//! What is served, and where: the root `/`, the index `/api`, the health
//! check `/healthz`, the OpenAPI document; and the paths no route serves.
//!
//! `GET /` is the URL the server prints when it starts, so it answers with
//! what is served: JSON by default (curl, scripts), and for a client that
//! prefers HTML (a browser) a small page of links, `index.html`. The
//! representation depends on `Accept`, so the response says `Vary: Accept`
//! (RFC 9110 section 12.5.5). Like `/healthz`, `/` is outside `/api` and
//! needs no token.
//!
//! A path that no route serves is 404. When it names a collection outside
//! `/api` (`/todos`, `/widgets/7`: json-server serves its collections at
//! the root), the 404's hint gives the path meant; when it looks like
//! another collection (`/posts`, `POST /api/posts`: json-server serves
//! every collection of its file), the hint names the two there are.
//!
//! A path served, but not with this method, is 405 (check 4 of
//! `app.rs`); its hint says when the configuration is why.

use std::sync::Arc;

use super::openapi::Served;
use super::{App, Query, Target, check_query, not_modified};
use crate::error::ApiError;
use crate::http::{Body, JSON, Method, Request, Response, accepts_json, prefers_html};

/// The page `GET /` sends to a browser.
const PAGE: &[u8] = include_bytes!("index.html");

/// What `GET /` sends as JSON: where everything is.
#[derive(serde::Serialize)]
struct Home {
    api: &'static str,
    widgets: &'static str,
    todos: &'static str,
    openapi: &'static str,
    health: &'static str,
}

const HOME: Home = Home {
    api: "/api",
    widgets: "/api/widgets",
    todos: "/api/todos",
    openapi: "/api/openapi.json",
    health: "/healthz",
};

/// `/api`: where the collections are.
pub(super) fn index() -> Response {
    #[derive(serde::Serialize)]
    struct Index {
        widgets: &'static str,
        todos: &'static str,
    }
    let (widgets, todos) = ("/api/widgets", "/api/todos");
    Response::json(200, &Index { widgets, todos })
}

impl App {
    /// `/healthz`, outside `/api`: 200 while the server can serve (with
    /// `--data`, while its journal can be written; while its connections are
    /// not stuck: see `transport/capacity.rs`), else 503.
    pub(super) fn health(&self) -> Result<Response, ApiError> {
        #[derive(serde::Serialize)]
        struct Healthy {
            status: &'static str,
        }
        self.store.writable()?;
        if let Some(detail) = self.health.trouble() {
            return Err(ApiError::Unavailable { detail });
        }
        Ok(Response::json(200, &Healthy { status: "ok" }))
    }

    /// `/api/openapi.json`: the document `openapi.rs` makes for this
    /// configuration at its first request.
    pub(super) fn openapi(&self, req: &Request<'_>) -> Result<Response, ApiError> {
        let served = self.openapi.get_or_init(|| Served::new(&self.options));
        let Served { body, etag } = served;
        if let Some(unchanged) = not_modified(req, etag)? {
            return Ok(unchanged);
        }
        let body = Body::Shared(Arc::clone(body));
        Ok(Response::bytes(200, JSON, body).with_header("ETag", etag.clone()))
    }

    /// `/`: the index of what is served, as JSON or as an HTML page.
    pub(super) fn home(&self, req: &Request<'_>) -> Result<Response, ApiError> {
        let accept = req.header("Accept");
        let mut response = if prefers_html(accept) {
            let page = Body::Owned(PAGE.to_vec());
            Response::bytes(200, "text/html; charset=utf-8", page)
        } else if accept.is_some_and(|accept| !accepts_json(accept)) {
            return Err(ApiError::NotAcceptable);
        } else {
            Response::json(200, &HOME)
        };
        response.vary("Accept");
        Ok(response)
    }
}

/// The 404 for a path no route serves; see the module comment. `target`
/// is the request target (path and query); `recording` whether
/// `--record` is on.
pub(super) fn no_route(target: &str, resource: Target<'_>, recording: bool) -> ApiError {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    match resource {
        Target::Requests | Target::Request(_) if !recording => ApiError::NotFound {
            detail: format!("no resource at {path}: the request log is off"),
            hint: Some("start the server with --record N to keep the last N requests".into()),
        },
        Target::Misplaced(collection, id) => {
            let id = id.map(|id| format!("/{id}")).unwrap_or_default();
            let query = if query.is_empty() {
                String::new()
            } else {
                format!("?{query}")
            };
            ApiError::NotFound {
                detail: format!("no resource at {path}"),
                hint: Some(format!(
                    "the collections are under /api: try /api/{collection}{id}{query}"
                )),
            }
        }
        Target::NoneInApi(true) | Target::Nothing(true) => ApiError::NotFound {
            detail: format!("no resource at {path}"),
            hint: Some(
                "the collections are /api/todos and /api/widgets, and there are no others \
                 (GET /api lists them)"
                    .into(),
            ),
        },
        _ => ApiError::not_found(format!("no resource at {path}")),
    }
}

/// Whether the rest of a path no resource matched looks like a collection
/// or an item this server does not keep: one or two segments, the first a
/// word (not `_admin`), none of them a file name (`/favicon.ico`).
pub(super) fn looks_like_collection(rest: &[&str]) -> bool {
    matches!(rest.len(), 1 | 2)
        && rest[0].starts_with(|c: char| c.is_ascii_alphabetic())
        && !rest.iter().any(|segment| segment.contains('.'))
}

impl App {
    /// The methods served at `target`, as `Allow` lists them (RFC 9110
    /// section 10.2.1); `None` when no method is.
    pub(super) fn allowed(&self, target: Target<'_>) -> Option<String> {
        use Method::{Delete, Get, Head, Patch, Post, Put};
        let served: Vec<&str> = [Get, Head, Post, Put, Patch, Delete]
            .into_iter()
            .filter(|&method| self.route(method, target).is_some())
            .filter_map(Method::name)
            .collect();
        (!served.is_empty()).then(|| format!("{}, OPTIONS", served.join(", ")))
    }

    /// Check 4 when the table has no route for this method at this path:
    /// 404 when it has none for any method; a CORS preflight, and a plain
    /// `OPTIONS` once its query is checked (check 5), get what the path
    /// allows (RFC 9110 section 9.3.7); any other method is 405 with
    /// `Allow`.
    pub(super) fn not_routed(
        &self,
        req: &Request<'_>,
        target: Target<'_>,
        query: &Query,
    ) -> Result<Response, ApiError> {
        let Some(allow) = self.allowed(target) else {
            return Err(no_route(req.target, target, self.recorder.is_some()));
        };
        if !matches!(req.method, Method::Options) {
            return Err(not_allowed(req, target, allow, self.options.read_only));
        }
        if !req.is_preflight() {
            check_query(self.route(Method::Get, target), query.pairs()?)?;
        }
        Ok(Response::empty(204).with_header("Allow", allow))
    }
}

/// Check 4: the 405 for a method the path does not take, with a hint
/// when the configuration is why: `--read-only`, or a reset without
/// `--allow-reset`.
fn not_allowed(req: &Request<'_>, target: Target<'_>, allow: String, read_only: bool) -> ApiError {
    use Method::{Delete, Patch, Post, Put};
    let writes = matches!(req.method, Post | Put | Patch | Delete);
    let hint = match target {
        Target::Collection(_) | Target::Item(..) if writes && read_only => Some(
            "this server was started with --read-only, so it serves reads only: restart it \
             without --read-only to change data"
                .to_string(),
        ),
        Target::Collection(named) if matches!(req.method, Delete) => {
            let (collection, one) = (named.name(), named.name().trim_end_matches('s'));
            Some(format!(
                "DELETE /api/{collection} (every {one} at once) needs the server started with \
                 --allow-reset; to delete one {one}, DELETE /api/{collection}/{{id}}"
            ))
        }
        _ => None,
    };
    ApiError::MethodNotAllowed {
        method: req.method_name.to_string(),
        allow,
        hint,
    }
}
