//! CORS: the header fields that let a page served from another origin call
//! the API (the Fetch standard's CORS protocol). Every response gets them
//! here, last, errors included, so a browser script sees the real status
//! rather than a network error.

use super::App;
use crate::config::Cors;
use crate::http::{Request, Response};

/// The header fields a browser script may read from a response (CORS):
/// react-admin's simple-rest provider reads a list's total from
/// `Content-Range`, the json-server one from `X-Total-Count`.
pub const EXPOSED: &str = "Location, ETag, X-Total-Count, Link, Content-Range, X-Request-Id";

impl App {
    /// Adds the CORS header fields (the Fetch standard's CORS protocol) to
    /// the response to a request with `Origin`, so a page served from
    /// another origin can call the API; [`App::handle`] calls it only
    /// with CORS on, after adding `Vary: Origin` (RFC 9110 section
    /// 12.5.5), which every response then carries, for a shared cache: a
    /// request without `Origin` (not from a browser's script) gets
    /// nothing else. As json-server does by default, the request's
    /// `Origin` is echoed in `Access-Control-Allow-Origin` with
    /// `Access-Control-Allow-Credentials: true`, so that a `fetch` with
    /// `credentials: 'include'` (axios's `withCredentials`) is let
    /// through: the Fetch standard refuses `*` for such a request. Any
    /// origin by default, only the `--cors-origin` ones when listed, none
    /// with `--no-cors`. A preflight, the 204 to an `OPTIONS` with
    /// `Access-Control-Request-Method`, gets the path's methods and the
    /// request headers asked for; any other response exposes the header
    /// fields a client script needs.
    pub(super) fn cors(&self, req: &Request<'_>, origin: &str, response: &mut Response) {
        if let Cors::Origins(listed) = &self.options.cors
            && !listed.iter().any(|o| o.eq_ignore_ascii_case(origin))
        {
            return;
        }
        let allow_origin = origin.to_string();
        let preflight = response.status == 204 && req.is_preflight();
        let methods = match preflight {
            true => response.header("Allow").map(str::to_string),
            false => None,
        };
        // With a `Retry-After` (a 429 or 503 failed on purpose), which is
        // not CORS-safelisted, that one is exposed too, so that the retry
        // logic of a script in a browser can be tested as well.
        let retry_after =
            matches!(response.status, 429 | 503) && response.header("Retry-After").is_some();
        let headers = &mut response.headers;
        headers.push(("Access-Control-Allow-Origin", allow_origin.into()));
        headers.push(("Access-Control-Allow-Credentials", "true".into()));
        match methods {
            Some(methods) => {
                headers.push(("Access-Control-Allow-Methods", methods.into()));
                let asked = req.header("Access-Control-Request-Headers");
                if let Some(asked) = asked.filter(|h| !h.trim().is_empty()) {
                    headers.push(("Access-Control-Allow-Headers", asked.to_string().into()));
                }
                headers.push(("Access-Control-Max-Age", "600".into()));
            }
            None if retry_after => {
                let exposed = format!("{EXPOSED}, Retry-After");
                headers.push(("Access-Control-Expose-Headers", exposed.into()));
            }
            None => headers.push(("Access-Control-Expose-Headers", EXPOSED.into())),
        }
    }
}
