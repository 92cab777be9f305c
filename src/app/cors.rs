//! CORS: the header fields that let a page served from another origin call
//! the API (the Fetch standard's CORS protocol). Every response gets them
//! here, last, errors included, so a browser script sees the real status
//! rather than a network error.

use std::borrow::Cow;

use super::App;
use crate::config::Cors;
use crate::http::{Request, Response};

/// The header fields a browser script may read from a response (CORS):
/// react-admin's simple-rest provider reads a list's total from
/// `Content-Range`, the json-server one from `X-Total-Count`.
pub const EXPOSED: &str = "Location, ETag, X-Total-Count, Link, Content-Range, X-Request-Id";

impl App {
    /// Adds the CORS header fields (the Fetch standard's CORS protocol) to
    /// `response`, so a page served from another origin can call the API:
    /// any origin by default (`*`), only the `--cors-origin` origins (each
    /// echoed back, with `Vary: Origin`), or none with `--no-cors`. A
    /// preflight, the 204 to an `OPTIONS` with
    /// `Access-Control-Request-Method`, gets the path's methods and the
    /// request headers asked for; any other response exposes the header
    /// fields a client script needs.
    pub(super) fn cors(&self, req: &Request<'_>, mut response: Response) -> Response {
        let allow_origin: Cow<'static, str> = match &self.options.cors {
            Cors::Off => return response,
            Cors::Any => "*".into(),
            Cors::Origins(origins) => {
                response.headers.push(("Vary", "Origin".into()));
                match req.header("Origin") {
                    Some(origin) if origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) => {
                        origin.to_string().into()
                    }
                    _ => return response,
                }
            }
        };
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
        headers.push(("Access-Control-Allow-Origin", allow_origin));
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
        response
    }
}
