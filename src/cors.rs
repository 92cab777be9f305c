//! Cross-origin resource sharing (the Fetch standard's CORS protocol), so a
//! page served from another origin can call the API from a browser.
//!
//! On by default for every origin: every response carries
//! `Access-Control-Allow-Origin: *` and exposes the headers a client needs
//! (`Location`, `ETag`, `X-Total-Count`, `Link`). A preflight (`OPTIONS`
//! with `Access-Control-Request-Method`) is answered with the path's methods
//! and whatever request headers were asked for. `--cors-origin` restricts
//! this to the origins listed, echoing a matching `Origin` back and adding
//! `Vary: Origin`; `--no-cors` sends none of it. Applied in `connection.rs`
//! to every reply, errors included.

use crate::response::{Reply, Text};

/// The headers a browser script may read from a response.
pub const EXPOSED: &str = "Location, ETag, X-Total-Count, Link";

/// How long a browser may cache a preflight's answer, in seconds.
const MAX_AGE: &str = "600";

/// The CORS policy, from `--cors-origin` and `--no-cors`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cors {
    /// Any origin (`*`): the default.
    #[default]
    Any,
    /// Only these origins, as `scheme://host[:port]`, lowercase.
    Origins(Vec<String>),
    /// No CORS headers at all.
    Off,
}

/// The request headers CORS looks at.
#[derive(Debug, Default, Clone, Copy)]
pub struct Asked<'a> {
    pub origin: Option<&'a str>,
    /// `Access-Control-Request-Method`: present on a preflight.
    pub method: Option<&'a str>,
    /// `Access-Control-Request-Headers`.
    pub headers: Option<&'a str>,
}

impl Cors {
    /// Adds the CORS headers to `reply`. A preflight is an `OPTIONS` reply
    /// that carries `Allow` (the path exists) to a request with
    /// `Access-Control-Request-Method`.
    pub fn apply(&self, reply: &mut Reply, asked: Asked<'_>) {
        let allow_origin: Text = match self {
            Cors::Off => return,
            Cors::Any => Text::Fixed("*"),
            Cors::Origins(origins) => {
                reply.headers.push(("Vary", Text::Fixed("Origin")));
                match asked.origin {
                    Some(origin) if origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) => {
                        Text::Owned(origin.to_string())
                    }
                    _ => return,
                }
            }
        };
        let preflight = asked.method.is_some() && reply.status == 204;
        let methods = preflight.then(|| reply.header("Allow").map(|m| Text::Owned(m.to_string())));
        reply
            .headers
            .push(("Access-Control-Allow-Origin", allow_origin));
        match methods {
            Some(Some(methods)) => {
                reply
                    .headers
                    .push(("Access-Control-Allow-Methods", methods));
                if let Some(headers) = asked.headers.filter(|h| !h.trim().is_empty()) {
                    reply.headers.push((
                        "Access-Control-Allow-Headers",
                        Text::Owned(headers.to_string()),
                    ));
                }
                reply
                    .headers
                    .push(("Access-Control-Max-Age", Text::Fixed(MAX_AGE)));
            }
            _ => reply
                .headers
                .push(("Access-Control-Expose-Headers", Text::Fixed(EXPOSED))),
        }
    }
}

/// Checks one `--cors-origin` value: `scheme://host[:port]`, nothing after.
pub fn parse_origin(text: &str) -> Option<String> {
    let text = text.trim().to_ascii_lowercase();
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))?;
    let valid = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    valid.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(cors: &Cors, reply: Reply, asked: Asked<'_>) -> Vec<(&'static str, String)> {
        let mut reply = reply;
        cors.apply(&mut reply, asked);
        reply
            .headers
            .into_iter()
            .map(|(name, value)| (name, value.to_string()))
            .collect()
    }

    fn get(origin: Option<&str>) -> Asked<'_> {
        Asked {
            origin,
            ..Asked::default()
        }
    }

    #[test]
    fn any_origin_by_default() {
        let h = headers(&Cors::Any, Reply::empty(204), get(None));
        assert!(h.contains(&("Access-Control-Allow-Origin", "*".into())));
        assert!(h.contains(&("Access-Control-Expose-Headers", EXPOSED.into())));
    }

    #[test]
    fn preflight_lists_the_path_methods_and_echoes_headers() {
        let options = Reply::empty(204).with_header("Allow", "GET, HEAD, POST, OPTIONS");
        let asked = Asked {
            origin: Some("http://localhost:3000"),
            method: Some("POST"),
            headers: Some("content-type, x-trace"),
        };
        let h = headers(&Cors::Any, options, asked);
        for expected in [
            ("Access-Control-Allow-Origin", "*"),
            ("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS"),
            ("Access-Control-Allow-Headers", "content-type, x-trace"),
            ("Access-Control-Max-Age", "600"),
        ] {
            assert!(h.contains(&(expected.0, expected.1.into())), "{h:?}");
        }
    }

    #[test]
    fn listed_origins_are_reflected_others_get_nothing() {
        let cors = Cors::Origins(vec!["http://a.test".into(), "https://b.test:8443".into()]);
        let h = headers(&cors, Reply::empty(204), get(Some("https://b.test:8443")));
        assert!(h.contains(&("Access-Control-Allow-Origin", "https://b.test:8443".into())));
        assert!(h.contains(&("Vary", "Origin".into())));
        let h = headers(&cors, Reply::empty(204), get(Some("http://evil.test")));
        assert_eq!(h, [("Vary", "Origin".to_string())]);
        let h = headers(&cors, Reply::empty(204), get(None));
        assert_eq!(h, [("Vary", "Origin".to_string())]);
        assert!(headers(&Cors::Off, Reply::empty(204), get(Some("http://a.test"))).is_empty());
    }

    #[test]
    fn origins_are_checked() {
        assert_eq!(
            parse_origin("HTTP://Localhost:3000"),
            Some("http://localhost:3000".into())
        );
        assert_eq!(
            parse_origin("https://[::1]:8443"),
            Some("https://[::1]:8443".into())
        );
        for bad in [
            "localhost:3000",
            "http://",
            "http://a.test/",
            "ftp://a",
            "*",
        ] {
            assert_eq!(parse_origin(bad), None, "{bad}");
        }
    }
}
