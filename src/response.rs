//! What the server sends back: a [`Reply`] value, its JSON and problem+json
//! constructors, and its encoding into HTTP/1.1 bytes.
//!
//! Handlers build a `Reply` and never touch a socket. `server.rs` calls
//! [`Reply::encode`] once per request and writes the bytes in one go. We
//! encode the response ourselves, rather than through the HTTP library's `Response`,
//! because that type always adds `Content-Length: 0` to a 204 (which RFC 9110
//! section 8.6 forbids) and cannot say `Connection: close`.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::error::{ApiError, FieldError};

pub const JSON: &str = "application/json";
pub const PROBLEM_JSON: &str = "application/problem+json";

/// A response before it is encoded: status, extra headers and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// Headers beyond the standard ones `encode` always writes.
    pub headers: Vec<(&'static str, Text)>,
    /// The body and its media type; `None` for 204.
    pub body: Option<(&'static str, Body)>,
    /// How long to hold the response back (`--delay`, `_delay`): the
    /// connection layer sends it this much later, without a worker waiting.
    pub delay: Duration,
}

/// A header value: fixed (`Allow`, CORS), made for this response, or an
/// entity tag, kept inline (no allocation for the most common header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    Fixed(&'static str),
    Owned(String),
    Tag(Tag),
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Fixed(text) => text,
            Text::Owned(text) => text,
            Text::Tag(tag) => tag.as_str(),
        }
    }
}

impl From<&'static str> for Text {
    fn from(text: &'static str) -> Text {
        Text::Fixed(text)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text::Owned(text)
    }
}

impl From<Tag> for Text {
    fn from(tag: Tag) -> Text {
        Text::Tag(tag)
    }
}

/// A response body: bytes made for this response, or bytes shared with the
/// store's cache of a serialized list (see `Store::list_json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl std::ops::Deref for Body {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Body::Owned(bytes) => bytes,
            Body::Shared(bytes) => bytes,
        }
    }
}

impl Reply {
    /// A JSON response with the given status.
    pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> Reply {
        match serde_json::to_vec(value) {
            Ok(bytes) => Reply::bytes(status, JSON, bytes),
            Err(err) => {
                // Our own types always serialize; reaching this is a bug.
                log::error!("cannot serialize a response body: {err}");
                Reply::from(ApiError::Internal)
            }
        }
    }

    /// A response with an already-encoded body.
    pub fn bytes(status: u16, content_type: &'static str, bytes: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Some((content_type, Body::Owned(bytes))),
            delay: Duration::ZERO,
        }
    }

    /// A JSON response whose body is shared, not copied.
    pub fn shared_json(status: u16, bytes: Arc<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Some((JSON, Body::Shared(bytes))),
            delay: Duration::ZERO,
        }
    }

    /// A response without a body (204).
    pub fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: None,
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<Text>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    /// The value of one of our extra headers, if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &**v)
    }

    pub fn body_bytes(&self) -> &[u8] {
        self.body.as_ref().map_or(&[], |(_, b)| b)
    }

    /// The full HTTP/1.1 message. `date` is an IMF-fixdate; `head_only`
    /// drops the body but keeps its `Content-Length` (RFC 9110 section 9.3.2);
    /// `connection` is written as the `Connection` header when given.
    pub fn encode(&self, date: &str, head_only: bool, connection: Option<&str>) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out, date, head_only, connection);
        out
    }

    /// [`Reply::encode`], appended to `out`: a worker reuses one buffer.
    pub fn encode_into(
        &self,
        out: &mut Vec<u8>,
        date: &str,
        head_only: bool,
        connection: Option<&str>,
    ) {
        // Plain appends rather than `write!`: on a small response, the
        // formatting machinery cost more than everything else here.
        let body = self.body_bytes();
        let extra: usize = self
            .headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        out.reserve(160 + extra + if head_only { 0 } else { body.len() });
        let mut line = |parts: &[&[u8]]| {
            for part in parts {
                out.extend_from_slice(part);
            }
            out.extend_from_slice(b"\r\n");
        };
        let status = decimal(u64::from(self.status));
        line(&[
            b"HTTP/1.1 ",
            status.as_ref(),
            b" ",
            reason_phrase(self.status).as_bytes(),
        ]);
        line(&[b"Date: ", date.as_bytes()]);
        // Clients may keep a copy, but must revalidate it (ETag) before use.
        line(&[b"Cache-Control: no-cache"]);
        if let Some((content_type, _)) = &self.body {
            line(&[b"Content-Type: ", content_type.as_bytes()]);
        }
        // RFC 9110 section 8.6: no Content-Length on a 204 or a 304.
        if self.status != 204 && self.status != 304 {
            line(&[b"Content-Length: ", decimal(body.len() as u64).as_ref()]);
        }
        for (name, value) in &self.headers {
            line(&[name.as_bytes(), b": ", value.as_bytes()]);
        }
        if let Some(connection) = connection {
            line(&[b"Connection: ", connection.as_bytes()]);
        }
        line(&[]);
        if !head_only {
            out.extend_from_slice(body);
        }
    }
}

/// The decimal digits of `n`, without allocating.
pub(crate) fn decimal(mut n: u64) -> impl AsRef<[u8]> {
    struct Digits([u8; 20], usize);
    impl AsRef<[u8]> for Digits {
        fn as_ref(&self) -> &[u8] {
            &self.0[self.1..]
        }
    }
    let mut digits = Digits([0; 20], 20);
    loop {
        digits.1 -= 1;
        digits.0[digits.1] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return digits;
        }
    }
}

/// A strong entity tag (RFC 9110 section 8.8.3) for a representation: a
/// hash of its bytes, so it changes exactly when the bytes change (up to a
/// 64-bit hash collision). Formatted on the stack:
/// `"<length in hex>-<hash, 16 hex digits>"`, at most 35 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    text: [u8; 40],
    len: usize,
}

impl Tag {
    /// The tag of these bytes.
    pub fn of(bytes: &[u8]) -> Tag {
        use std::hash::Hasher;
        // `DefaultHasher::new()` has fixed keys: the same bytes give the
        // same tag in every run of the same build.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        hasher.write(bytes);
        // Written by hand: `format!` cost more than the hash on every item
        // read.
        let length = bytes.len() as u64;
        let length_digits = (((64 - length.leading_zeros()) as usize).div_ceil(4)).max(1);
        let mut text = [0; 40];
        text[0] = b'"';
        hex(length, &mut text[1..=length_digits]);
        text[length_digits + 1] = b'-';
        hex(
            hasher.finish(),
            &mut text[length_digits + 2..length_digits + 18],
        );
        text[length_digits + 18] = b'"';
        Tag {
            text,
            len: length_digits + 19,
        }
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written.
        std::str::from_utf8(&self.text[..self.len]).unwrap_or("")
    }
}

/// Fills `digits` with the last `digits.len()` hex digits of `n`.
fn hex(mut n: u64, digits: &mut [u8]) {
    for digit in digits.iter_mut().rev() {
        *digit = b"0123456789abcdef"[(n & 0xf) as usize];
        n >>= 4;
    }
}

/// Whether an `If-None-Match` value matches `current` (weak comparison,
/// RFC 9110 section 13.1.2): `*`, or any listed tag, `W/` or not.
pub fn none_match_hits(header: &str, current: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == current)
}

/// Whether an `If-Match` value matches `current` (strong comparison,
/// RFC 9110 section 13.1.1): `*` (any current representation), or a listed
/// tag that is not weak.
pub fn match_hits(header: &str, current: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag == current)
}

/// The problem+json member names of RFC 9457, plus our `errors` and `hint`.
#[derive(Serialize)]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'static str,
    status: u16,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'static str>,
}

/// Every error becomes a problem document here, and nowhere else.
impl From<ApiError> for Reply {
    fn from(err: ApiError) -> Reply {
        let status = err.status();
        let errors = match &err {
            ApiError::Invalid { errors, .. } => Some(errors.as_slice()),
            _ => None,
        };
        let problem = Problem {
            kind: "about:blank",
            title: reason_phrase(status),
            status,
            detail: err.to_string(),
            errors,
            hint: err.hint(),
        };
        // Serializing this struct of strings cannot fail; fall back to a
        // fixed document rather than recurse into `Reply::json`.
        let bytes = serde_json::to_vec(&problem).unwrap_or_else(|_| {
            br#"{"type":"about:blank","title":"Internal Server Error","status":500}"#.to_vec()
        });
        let reply = Reply::bytes(status, PROBLEM_JSON, bytes);
        match err {
            ApiError::MethodNotAllowed { allow, .. } => reply.with_header("Allow", allow),
            ApiError::Unauthorized { .. } => reply.with_header("WWW-Authenticate", "Bearer"),
            _ => reply,
        }
    }
}

/// The reason phrases of RFC 9110 section 15 for the statuses we send.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        507 => "Insufficient Storage",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(reply: &Reply, head_only: bool) -> String {
        String::from_utf8_lossy(&reply.encode("Thu, 01 Jan 1970 00:00:00 GMT", head_only, None))
            .into_owned()
    }

    #[test]
    fn etags_are_length_and_hash_in_hex() {
        use std::hash::Hasher;
        for body in [&b""[..], b"x", b"0123456789abcdef", &[7u8; 300]] {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            hasher.write(body);
            let expected = format!("\"{:x}-{:016x}\"", body.len(), hasher.finish());
            assert_eq!(Tag::of(body).as_str(), expected);
        }
        assert_ne!(Tag::of(b"a"), Tag::of(b"b"));
    }

    #[test]
    fn decimal_writes_every_digit() {
        for n in [0, 7, 10, 204, 65_536, u64::MAX] {
            assert_eq!(decimal(n).as_ref(), n.to_string().as_bytes());
        }
    }

    #[test]
    fn encodes_status_line_standard_headers_and_body() {
        let wire = text(&Reply::json(200, &[1, 2]), false);
        assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
        assert!(wire.contains("Cache-Control: no-cache\r\n"));
        assert!(wire.contains("Content-Type: application/json\r\n"));
        assert!(wire.ends_with("Content-Length: 5\r\n\r\n[1,2]"), "{wire}");
    }

    #[test]
    fn head_keeps_length_but_drops_body() {
        let wire = text(&Reply::json(200, &[1, 2]), true);
        assert!(wire.ends_with("Content-Length: 5\r\n\r\n"), "{wire}");
    }

    #[test]
    fn no_content_has_neither_length_nor_type() {
        let wire = text(&Reply::empty(204), false);
        assert!(!wire.contains("Content-Length"), "{wire}");
        assert!(!wire.contains("Content-Type"), "{wire}");
    }

    #[test]
    fn problem_has_rfc_9457_members_and_allow() {
        let reply = Reply::from(ApiError::MethodNotAllowed {
            method: "PUT".into(),
            allow: "GET, HEAD",
        });
        assert_eq!(reply.status, 405);
        assert_eq!(reply.header("allow"), Some("GET, HEAD"));
        let body: serde_json::Value = serde_json::from_slice(reply.body_bytes()).unwrap();
        assert_eq!(body["type"], "about:blank");
        assert_eq!(body["title"], "Method Not Allowed");
        assert_eq!(body["status"], 405);
        assert!(body.get("errors").is_none());
    }
}
