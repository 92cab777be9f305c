//! HTTP messages as this server sees them: the [`Request`] the transport
//! hands to the application, and the [`Response`] it gets back.
//!
//! - A request: its method, its target (the path, and the query decoded
//!   into name and value pairs, [`query_pairs`]), the few header fields
//!   the server reads ([`READ_HEADERS`]), and its body as a plain reader.
//!   Reading the body checks, in this order, the size cap against
//!   `Content-Length` (before a byte is read), the media type
//!   (`Content-Type`, `negotiation.rs`), the size cap again while reading,
//!   and the syntax of the format, JSON or form (RFC 9110 section 8.3).
//! - Content negotiation: whether `Accept` admits JSON or prefers HTML
//!   (section 12.5.1, `negotiation.rs`); and the `return` preference of
//!   `Prefer` (`prefer.rs`, RFC 7240).
//! - A response: status, header fields, body; its encoding as HTTP/1.1
//!   bytes (RFC 9112), and every error as an RFC 9457 problem document
//!   (`problem.rs`). Form bodies are decoded in `urlencoded.rs`; the
//!   preconditions `If-Match` and `If-None-Match` are read in
//!   `conditional.rs`.
//!
//! Nothing here knows about sockets or the HTTP library, so all of it can
//! be tested with byte strings (`http_tests.rs`).

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::error::{ApiError, FieldError};
use crate::model::{Fields, Members, json_reason};

pub mod conditional;
mod negotiation;
pub mod prefer;
mod problem;
mod urlencoded;
use negotiation::media_types_hint;
pub use negotiation::{BodyFormat, accepts_json, admits, names, prefers_html};
pub(crate) use problem::instance_member;
pub use urlencoded::decode_form;

/// The methods this server tells apart; everything else is `Other` (405).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
    Other,
}

impl Method {
    /// The name, for every method but `Other`.
    pub fn name(self) -> Option<&'static str> {
        let name = match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Other => return None,
        };
        Some(name)
    }

    /// Methods are case-sensitive (RFC 9110 section 9.1): `get` is not `GET`.
    pub fn parse(name: &str) -> Method {
        match name {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }
}

/// The request header fields this server reads: the transport copies
/// these, and only these, into a [`Request`]. Reading one more is one more
/// name here.
pub const READ_HEADERS: &[&str] = &[
    "Accept",
    "Authorization",
    "Content-Type",
    "If-Match",
    "If-None-Match",
    "Origin",
    "Prefer",
    "Access-Control-Request-Method",
    "Access-Control-Request-Headers",
    "X-Request-Id",
    "Last-Event-ID",
];

/// What answers requests: where the application and the transport meet.
/// The application is one; in tests, anything (a closure is a handler).
pub trait Handler: Send + Sync + 'static {
    /// The response to `request`.
    fn handle(&self, request: &mut Request<'_>) -> Response;

    /// The response when the transport refuses `request` itself, instead
    /// of [`Handler::handle`]: framing it cannot trust (400, 501), or
    /// `handle` panicked (500). The application adds what every response
    /// carries.
    fn refuse(&self, _request: &Request<'_>, error: ApiError) -> Response {
        Response::from(error)
    }

    /// The server is stopping: end every streamed body now
    /// ([`Body::Stream`]), for the stop waits for them.
    fn stop(&self) {}
}

impl<F: Fn(&mut Request<'_>) -> Response + Send + Sync + 'static> Handler for F {
    fn handle(&self, request: &mut Request<'_>) -> Response {
        self(request)
    }
}

/// One request as the application sees it.
pub struct Request<'a> {
    pub method: Method,
    /// The method as sent, for messages about unsupported ones.
    pub method_name: &'a str,
    /// The request's id: its response's `X-Request-Id` (the transport's).
    pub id: &'a str,
    /// The request target: path plus optional `?query`.
    pub target: &'a str,
    /// The fields of [`READ_HEADERS`] the request has.
    pub headers: Vec<(&'static str, String)>,
    /// The declared `Content-Length`, when there is one.
    pub content_length: Option<u64>,
    /// The body, read on demand; reading may send `100 Continue`.
    pub body: &'a mut dyn Read,
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
    /// The body as [`Request::fields`] read it, kept for `--record`.
    pub body_read: Option<Vec<u8>>,
}

impl<'a> Request<'a> {
    /// A header field's value (one of [`READ_HEADERS`]), by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        for (field, value) in &self.headers {
            if field.eq_ignore_ascii_case(name) {
                return Some(value);
            }
        }
        None
    }

    /// A CORS preflight: `OPTIONS` with `Access-Control-Request-Method`.
    pub fn is_preflight(&self) -> bool {
        matches!(self.method, Method::Options)
            && self.header("Access-Control-Request-Method").is_some()
    }

    /// The path: the target up to its first `?` (RFC 9112 section 3.2).
    pub fn path(&self) -> &'a str {
        self.target
            .split_once('?')
            .map_or(self.target, |(path, _)| path)
    }

    /// Reads and decodes the body into fields: see the module comment.
    /// `merge_patch` also admits `application/merge-patch+json` (PATCH).
    /// `example`, a valid body, is the hint for an empty one.
    pub fn fields(&mut self, merge_patch: bool, example: &str) -> Result<Fields, ApiError> {
        let limit = self.max_body_bytes;
        if matches!(self.content_length, Some(n) if n > limit as u64) {
            return Err(ApiError::ContentTooLarge { limit });
        }
        let format = match self.header("Content-Type") {
            // What nearly every JSON client sends, known without parsing.
            Some("application/json") => Some(BodyFormat::Json),
            Some(value) => Some(BodyFormat::of(value, merge_patch)?),
            None => None,
        };
        // At most `limit` bytes; one byte more means 413. Chunked bodies
        // have no `Content-Length`, so this is where they are cut off. The
        // declared length sizes the buffer: the body is then read in one go.
        let expected = self.content_length.unwrap_or(0) as usize;
        let mut body = Vec::with_capacity(expected.min(limit) + 1);
        match self.body.take(limit as u64 + 1).read_to_end(&mut body) {
            Ok(_) if body.len() > limit => return Err(ApiError::ContentTooLarge { limit }),
            Ok(_) => {}
            // SO_RCVTIMEO reports a timeout as WouldBlock; the transport's
            // deadline as TimedOut.
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                return Err(ApiError::RequestTimeout);
            }
            Err(err) => {
                let detail = format!("cannot read the request body: {err}");
                return Err(ApiError::bad_request(detail));
            }
        }
        let fields = match format {
            _ if body.is_empty() => Err(ApiError::BadRequest {
                detail: "the request body is empty".into(),
                hint: Some(format!(
                    "send a JSON object with Content-Type: application/json, e.g. {example}"
                )),
            }),
            Some(BodyFormat::Json) => decode_json(&body),
            Some(BodyFormat::Form) => decode_form(&body),
            None => Err(ApiError::UnsupportedMediaType {
                detail: "the request has a body but no Content-Type".into(),
                hint: media_types_hint(merge_patch),
            }),
        };
        self.body_read = Some(body);
        fields
    }
}

/// The parameters of a query, in order, decoded as
/// `application/x-www-form-urlencoded` (the WHATWG URL standard, section 5:
/// what a browser sends for a form submitted by GET). `&` separates pairs
/// and the first `=` a name from its value; empty pairs (`a=1&&b=2`, a bare
/// `?`) are skipped, and a name without `=` has an empty value. As for form
/// bodies, and unlike the standard's lenient parser, a bad escape is 400
/// naming the parameter: a filter must never match text the client did not
/// send.
pub fn query_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    let mut pairs = Vec::new();
    for pair in query.split('&') {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let bad = |name: &str, why: &str| ApiError::BadRequest {
            detail: format!("bad query parameter '{name}': {why}"),
            hint: Some("percent-encode the query as UTF-8: %25 for '%', %C3%A9 for 'é'".into()),
        };
        // A name that does not decode is shown as sent.
        let name = percent_decode(name).map_err(|why| bad(name, why))?;
        let value = percent_decode(value).map_err(|why| bad(&name, why))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// Decodes one name or value: `+` is a space and `%XX` the byte with hex
/// value XX. Every `%` must start such an escape, and the bytes must be
/// UTF-8.
pub(crate) fn percent_decode(part: &str) -> Result<String, &'static str> {
    let bytes = part.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                // Checked digit by digit: `from_str_radix` alone takes "+1".
                let byte = bytes
                    .get(i + 1..i + 3)
                    .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    .ok_or("'%' must be followed by two hex digits")?;
                decoded.push(byte);
                i += 3;
            }
            b'+' => {
                decoded.push(b' ');
                i += 1;
            }
            byte => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).map_err(|_| "the decoded text is not UTF-8")
}

/// Decodes a JSON body. Syntax errors are 400 with line and column; a valid
/// document that is not an object is 422 (well-formed, but wrong).
pub fn decode_json(body: &[u8]) -> Result<Fields, ApiError> {
    let text = std::str::from_utf8(body).map_err(invalid_utf8)?;
    let mut de = serde_json::Deserializer::from_str(text);
    // The object, and nothing after it.
    let parsed = match Members::deserialize(&mut de) {
        Ok(members) => de.end().and(Ok(members)),
        Err(err) => Err(err),
    };
    let err = match parsed {
        Ok(Members(fields)) => return Ok(fields),
        // Not an object; but is it valid JSON at all? `[1,` is a syntax
        // error (400), `[1]` a well-formed document of the wrong shape (422).
        Err(err) if err.is_data() => match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => {
                return Err(ApiError::Invalid {
                    subject: "request body",
                    errors: vec![FieldError::new("", "must be a JSON object")],
                });
            }
            Err(syntax) => syntax,
        },
        Err(err) => err,
    };
    let reason = json_reason(&err);
    let detail = format!(
        "the body is not valid JSON: {reason} at line {}, column {}",
        err.line(),
        err.column()
    );
    // The reverse of the mistake `decode_form` catches: `curl -H
    // 'Content-Type: application/json' -d 'title=x&userId=1'`.
    let hint = urlencoded::looks_like_form(text).then(|| {
        "the body looks like a form (name=value&...): send it with Content-Type: \
         application/x-www-form-urlencoded, or send JSON such as {\"title\": \"x\", \"userId\": 1}"
            .to_string()
    });
    Err(ApiError::BadRequest { detail, hint })
}

pub(crate) fn invalid_utf8(err: std::str::Utf8Error) -> ApiError {
    ApiError::bad_request(format!(
        "the body is not valid UTF-8 (bad byte at offset {})",
        err.valid_up_to()
    ))
}

/// The log's timestamp, in UTC: `2026-11-21T07:00:00.123Z` (RFC
/// 3339 with milliseconds; the request log's `time` too).
pub const TIMESTAMP: &[time::format_description::FormatItem<'_>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

pub const JSON: &str = "application/json";
pub const PROBLEM_JSON: &str = "application/problem+json";
/// Server-sent events (the WHATWG HTML standard, section 9.2).
pub const EVENT_STREAM: &str = "text/event-stream";

/// A response before it is encoded: status, header fields and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Fields beyond those `encode` always writes.
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The body and its media type; `None` for 204 and 304.
    pub body: Option<(&'static str, Body)>,
    /// How long to hold the response back (`--delay`, `_delay`): the
    /// transport sends it this much later, giving back its turn meanwhile.
    pub delay: Duration,
    /// Send nothing: the transport closes the connection without a
    /// response (`_fault=close`); the status is only logged.
    pub unanswered: bool,
    /// The answer to a health probe (`/healthz`): its access-log line is
    /// written at `debug`, for probes come every few seconds and their
    /// lines would bury the others.
    pub probe: bool,
}

/// A response body: bytes made for this response, or shared with the
/// store's cached list (see `Store::list`), or a stream made as it is
/// sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
    Stream(Stream),
}

/// A body with no end known in advance (`/api/events`): the response has
/// no `Content-Length`, and the transport writes its head, gives back the
/// request's turn (a stream lasts as long as its client listens), calls
/// [`Streamed::send`], then closes the connection, which is how such a
/// body ends (RFC 9112 section 6.3, rule 8).
#[derive(Clone)]
pub struct Stream(pub Arc<dyn Streamed>);

/// What writes a [`Stream`].
pub trait Streamed: Send + Sync {
    /// Writes the body to `out` until it ends, or until writing fails.
    fn send(&self, out: &mut dyn Write) -> io::Result<()>;
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stream")
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Stream {}

impl Response {
    /// Tags the response with its request's id: the `X-Request-Id` field,
    /// and in a problem document its `instance` (`problem.rs`). `id` must
    /// be safe in a header field (the transport checks a client's own).
    pub fn identify(&mut self, id: String) {
        if matches!(&self.body, Some((PROBLEM_JSON, _))) {
            problem::add_instance(self, &id);
        }
        self.headers.push(("X-Request-Id", id.into()));
    }

    /// A JSON response with the given status.
    pub fn json<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Response {
        match serde_json::to_vec(value) {
            Ok(bytes) => Response::bytes(status, JSON, Body::Owned(bytes)),
            Err(err) => {
                // Our own types always serialize; reaching this is a bug.
                log::error!(target: crate::logging::LOG, "cannot serialize a response body: {err}");
                Response::from(ApiError::Internal)
            }
        }
    }

    /// A response with a body already encoded.
    pub fn bytes(status: u16, content_type: &'static str, body: Body) -> Response {
        Response {
            status,
            // Room for the usual few: ETag, Location, two of CORS.
            headers: Vec::with_capacity(4),
            body: Some((content_type, body)),
            delay: Duration::ZERO,
            unanswered: false,
            probe: false,
        }
    }

    /// A response without a body (204, 304).
    pub fn empty(status: u16) -> Response {
        Response {
            body: None,
            ..Response::bytes(status, "", Body::Owned(Vec::new()))
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Says that the response depends on the request header field `name`
    /// (RFC 9110 section 12.5.5), for a shared cache: one `Vary` field
    /// line lists them all.
    pub fn vary(&mut self, name: &'static str) {
        for (field, value) in self.headers.iter_mut() {
            if *field == "Vary" {
                *value = format!("{value}, {name}").into();
                return;
            }
        }
        self.headers.push(("Vary", name.into()));
    }

    /// The value of one of the extra header fields, if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        let field = self
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name));
        field.map(|(_, value)| &**value)
    }

    pub fn body_bytes(&self) -> &[u8] {
        match &self.body {
            Some((_, Body::Owned(bytes))) => bytes,
            Some((_, Body::Shared(bytes))) => bytes,
            Some((_, Body::Stream(_))) | None => &[],
        }
    }

    /// The whole HTTP/1.1 message (RFC 9112). `date` is an IMF-fixdate;
    /// `head_only` drops the body but keeps its `Content-Length` (RFC 9110
    /// section 9.3.2); `connection` is sent as the `Connection` field.
    pub fn encode(&self, date: &str, head_only: bool, connection: Option<&str>) -> Vec<u8> {
        let body = self.body_bytes();
        let mut head = String::with_capacity(512 + body.len());
        head += "HTTP/1.1 ";
        head += status_text(self.status);
        head += "\r\nDate: ";
        head += date;
        // Clients may keep a copy, but must revalidate it (ETag) first.
        head += "\r\nCache-Control: no-cache\r\n";
        if let Some((content_type, _)) = &self.body {
            head += "Content-Type: ";
            head += content_type;
            head += "\r\n";
        }
        // RFC 9110 section 8.6: no Content-Length on a 204 or a 304; a
        // stream's length is not known (`Stream`).
        let stream = matches!(self.body, Some((_, Body::Stream(_))));
        if self.status != 204 && self.status != 304 && !stream {
            head += "Content-Length: ";
            head += &body.len().to_string();
            head += "\r\n";
        }
        for (name, value) in &self.headers {
            head += name;
            head += ": ";
            head += value;
            head += "\r\n";
        }
        if let Some(connection) = connection {
            head += "Connection: ";
            head += connection;
            head += "\r\n";
        }
        head += "\r\n";
        let mut out = head.into_bytes();
        if !head_only {
            out.extend_from_slice(body);
        }
        out
    }
}

/// The status code and reason phrase (RFC 9110 section 15) of each status
/// we send, as the status line carries them (RFC 9112 section 4): those of
/// a request that succeeds here, every error status in `error.rs`.
pub fn status_text(status: u16) -> &'static str {
    match status {
        200 => "200 OK",
        201 => "201 Created",
        204 => "204 No Content",
        304 => "304 Not Modified",
        _ => crate::error::error_status_line(status).unwrap_or("500 Internal Server Error"),
    }
}

/// The reason phrase alone: the `title` of a problem document.
pub(crate) fn reason_phrase(status: u16) -> &'static str {
    let text = status_text(status);
    text.split_once(' ').map_or(text, |(_, reason)| reason)
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
