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
//! A path served, but not with this method, is 405 (check 5 of
//! `mod.rs`); its hint says when the configuration is why.

use std::sync::Arc;

use super::openapi::Served;
use super::{App, not_modified};
use crate::error::ApiError;
use crate::http::{Body, JSON, Method, Request, Response, prefers_html};

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
        let response = if prefers_html(req.header("Accept")) {
            let page = Body::Owned(PAGE.to_vec());
            Response::bytes(200, "text/html; charset=utf-8", page)
        } else {
            req.check_accept()?;
            Response::json(200, &HOME)
        };
        Ok(response.with_header("Vary", "Accept"))
    }
}

/// The 404 for a path no route serves; see the module comment. `target`
/// is the request target (path and query), `segments` its path's;
/// `recording` whether `--record` is on.
pub(super) fn no_route(target: &str, segments: &[&str], recording: bool) -> ApiError {
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    if !recording && segments.get(..2) == Some(&["_admin", "requests"][..]) {
        return ApiError::NotFound {
            detail: format!("no resource at {path}: the request log is off"),
            hint: Some("start the server with --record N to keep the last N requests".into()),
        };
    }
    let detail = format!("no resource at {path}");
    let collection = match segments {
        [name] | [name, _] => ["widgets", "todos"].contains(name),
        _ => false,
    };
    if !collection {
        return ApiError::NotFound {
            detail,
            hint: other_collection(segments).then(|| {
                "the collections are /api/todos and /api/widgets, and there are no others \
                 (GET /api lists them)"
                    .to_string()
            }),
        };
    }
    let query = target.split_once('?').map_or("", |(_, query)| query);
    let mut meant = format!("/api/{}", segments.join("/"));
    if !query.is_empty() {
        meant = format!("{meant}?{query}");
    }
    ApiError::NotFound {
        detail,
        hint: Some(format!("the collections are under /api: try {meant}")),
    }
}

impl App {
    /// Check 5: the 405 for a method the path does not take, with a hint
    /// when the configuration is why: `--read-only`, or a reset without
    /// `--allow-reset`.
    pub(super) fn not_allowed(
        &self,
        req: &Request<'_>,
        segments: &[&str],
        allow: &str,
    ) -> ApiError {
        let writes = matches!(
            req.method,
            Method::Post | Method::Put | Method::Patch | Method::Delete
        );
        let hint = match segments {
            ["api", "todos" | "widgets", ..] if writes && self.options.read_only => Some(
                "this server was started with --read-only, so it serves reads only: restart it \
                 without --read-only to change data"
                    .to_string(),
            ),
            ["api", collection] if matches!(req.method, Method::Delete) => {
                let kind = collection.trim_end_matches('s');
                Some(format!(
                    "DELETE /api/{collection} (every {kind} at once) needs the server started with \
                     --allow-reset; to delete one {kind}, DELETE /api/{collection}/{{id}}"
                ))
            }
            _ => None,
        };
        ApiError::MethodNotAllowed {
            method: req.method_name.to_string(),
            allow: allow.to_string(),
            hint,
        }
    }
}

/// Whether a path looks like a collection or an item this server does not
/// keep (`/posts`, `/api/posts/1`, as json-server serves any collection
/// of its file): one or two segments, at the root or under `/api`, the
/// first a word (not `_admin`), none of them a file name (`/favicon.ico`).
fn other_collection(segments: &[&str]) -> bool {
    let rest = match segments {
        ["api", rest @ ..] => rest,
        rest => rest,
    };
    matches!(rest.len(), 1 | 2)
        && rest
            .first()
            .is_some_and(|name| name.starts_with(|c: char| c.is_ascii_alphabetic()))
        && !segments.iter().any(|segment| segment.contains('.'))
}
