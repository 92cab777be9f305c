//! What a request's head says of its body ([`Framing`]), and the body as
//! the handler reads it ([`BodyReader`]): the gaps of tiny_http's framing
//! closed on the normal path (`connection.rs`).

use std::io::{self, Read};
use std::time::Instant;

use super::connection::Turn;
use crate::error::ApiError;

/// What a request's header fields say about its body, looked up once.
///
/// tiny_http frames bodies itself, but with gaps this closes:
/// - it cannot see a `Content-Length` or `Transfer-Encoding` sent twice,
///   nor a `Content-Length` that is not plain digits or does not fit in 64
///   bits (it then reads no body, and the body would be read as the next
///   request): [`Framing::error`] refuses them, and the connection closes
///   (`tests/api/hardening.rs`, `ambiguous_framing_is_400...`,
///   `a_content_length_beyond_64_bits...`);
/// - it decodes `chunked` after any other transfer coding (`gzip,
///   chunked`) as if there were none: 501, as RFC 9112 section 6.1 asks
///   of a coding the server does not implement;
/// - it serves an HTTP/1.1 request without `Host`, or with two: 400 (RFC
///   9112 section 3.2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing {
    /// A `Content-Length` field is present.
    length_field: bool,
    /// A `Transfer-Encoding` field is present.
    chunked: bool,
    /// The client waits for `100 Continue` before it sends the body.
    pub expect: bool,
    /// `Connection: upgrade`.
    pub upgrade: bool,
    /// The `Content-Length`, as tiny_http parsed it.
    pub length: Option<u64>,
    /// The client asked to close the connection after this response, or
    /// speaks HTTP/1.0 without asking for keep-alive, or offered an upgrade
    /// (tiny_http then reads nothing more from the connection).
    pub close: bool,
    /// HTTP/1.0 with `Connection: keep-alive`: said back in the response.
    pub keep_alive_10: bool,
}

impl Framing {
    pub fn of(request: &tiny_http::Request) -> Framing {
        let http_10 = *request.http_version() == tiny_http::HTTPVersion(1, 0);
        let (mut upgrade, mut close, mut keep_alive) = (false, false, false);
        if let Some(connection) = field(request, "Connection") {
            upgrade = has_token(connection, "upgrade");
            close = has_token(connection, "close");
            keep_alive = has_token(connection, "keep-alive");
        }
        let keep_alive_10 = http_10 && keep_alive && !close;
        Framing {
            length_field: field(request, "Content-Length").is_some(),
            chunked: field(request, "Transfer-Encoding").is_some(),
            expect: field(request, "Expect").is_some(),
            upgrade,
            length: request
                .body_length()
                .map(u64::try_from)
                .and_then(Result::ok),
            close: close || upgrade || (http_10 && !keep_alive_10),
            keep_alive_10,
        }
    }

    /// Whether reading the body means waiting on the client. tiny_http
    /// reads a body of up to 1024 bytes before it hands the request over,
    /// unless the client waits for `100 Continue` or offers an upgrade;
    /// anything else comes off the socket as it is read.
    pub fn arrives_slowly(self) -> bool {
        self.chunked || self.expect || self.upgrade || matches!(self.length, Some(n) if n > 1024)
    }

    /// Framing or a head that tiny_http would serve as something it is
    /// not; see the type's comment.
    pub fn error(self, request: &tiny_http::Request) -> Option<ApiError> {
        let host = field(request, "Host");
        let http_11 = *request.http_version() == tiny_http::HTTPVersion(1, 1);
        if http_11 && host.is_none() {
            return Some(ApiError::BadRequest {
                detail: "an HTTP/1.1 request needs a Host header".into(),
                hint: Some("send Host: with the server's name and port".into()),
            });
        }
        if let Some(name) = repeats(request, host.is_some(), self) {
            let framing = if name == "Host" {
                ""
            } else {
                "ambiguous message framing: "
            };
            return Some(ApiError::bad_request(format!(
                "{framing}more than one {name} header"
            )));
        }
        if let Some(coding) = field(request, "Transfer-Encoding") {
            if !coding.trim().eq_ignore_ascii_case("chunked") {
                return Some(ApiError::NotImplemented {
                    detail: format!(
                        "Transfer-Encoding '{coding}': this server decodes only chunked"
                    ),
                });
            }
            if self.upgrade {
                return Some(ApiError::BadRequest {
                    detail: "a chunked body with Connection: upgrade is not supported".into(),
                    hint: Some(
                        "send the body with a Content-Length, or without the upgrade offer".into(),
                    ),
                });
            }
        }
        let length = field(request, "Content-Length")?;
        let why = if length.is_empty() || !length.as_bytes().iter().all(u8::is_ascii_digit) {
            "is not a number"
        } else if self.length.is_none() {
            "is too large"
        } else {
            return None;
        };
        Some(ApiError::bad_request(format!(
            "ambiguous message framing: Content-Length '{length}' {why}"
        )))
    }
}

/// A header field's first value (tiny_http's `Headers` finds only the
/// first).
pub(super) fn field<'a>(request: &'a tiny_http::Request, name: &str) -> Option<&'a str> {
    match request.headers().get(name) {
        Some(value) => Some(value.as_str()),
        None => None,
    }
}

/// Which of `Host` (when `host`, it is there), `Content-Length` and
/// `Transfer-Encoding` (when `framing` has them) the request carries more
/// than once. tiny_http's `Headers` finds only the first match and cannot
/// be iterated, so we look on one copy, renaming each first match before
/// looking again.
fn repeats(request: &tiny_http::Request, host: bool, framing: Framing) -> Option<&'static str> {
    let present = [
        ("Host", host),
        ("Content-Length", framing.length_field),
        ("Transfer-Encoding", framing.chunked),
    ];
    let mut headers = request.headers().clone();
    let renamed: tiny_http::HeaderField = "X-Counted".parse().ok()?;
    for (name, there) in present {
        if !there {
            continue;
        }
        if let Some(first) = headers.get_header_mut(name) {
            first.field = renamed.clone();
        }
        if headers.contains(name) {
            return Some(name);
        }
    }
    None
}

/// Whether a header value mentions `token`, in any case (as tiny_http
/// matches them).
fn has_token(value: &str, token: &str) -> bool {
    value
        .as_bytes()
        .windows(token.len())
        .any(|w| w.eq_ignore_ascii_case(token.as_bytes()))
}

/// The body as the handler reads it. Two gaps of tiny_http are closed
/// here:
/// - it has no deadline for a whole body: this one has the read timeout
///   (`tests/api/hardening.rs`, `a_trickled_body_gets_408...`);
/// - for a request that offers `Connection: upgrade` it hands over the raw
///   connection as the body: this reader stops at the `Content-Length`
///   (`an_upgrade_offer_with_a_body_is_ignored...`).
///
/// tiny_http sends `100 Continue` when its reader is first asked for, so
/// asking only at the first read means a body refused unread is never
/// invited (`tests/api/wire.rs`, `expect_100_continue_not_sent_when_refused_early`).
///
/// A body still on its way waits on its client: from the first read to
/// the body's end, the request gives back its turn, and takes one again
/// for the rest of its handler (`tests/api/hardening.rs`,
/// `slow_uploads_do_not_hold_the_threads`, `every_framing_takes_a_turn`).
pub(crate) struct BodyReader<'a, 't> {
    request: &'a mut tiny_http::Request,
    deadline: Instant,
    /// Whether a read has reached the end of the body.
    pub finished: bool,
    /// The bytes still to come when the library's reader does not stop at
    /// the body's end (an upgrade offer).
    left: Option<u64>,
    /// The request's turn, when the body arrives from the socket as it is
    /// read (`Framing::arrives_slowly`).
    turn: Option<&'a mut Turn<'t>>,
}

impl<'a, 't> BodyReader<'a, 't> {
    pub(super) fn new(
        request: &'a mut tiny_http::Request,
        framing: Framing,
        deadline: Instant,
        turn: Option<&'a mut Turn<'t>>,
    ) -> Self {
        BodyReader {
            request,
            deadline,
            finished: !framing.chunked && framing.length.unwrap_or(0) == 0,
            left: framing.upgrade.then_some(framing.length.unwrap_or(0)),
            turn: turn.filter(|_| framing.arrives_slowly()),
        }
    }

    fn read_from_client(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() > self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the body took longer than the read timeout",
            ));
        }
        let room = match self.left {
            Some(left) => buf.len().min(usize::try_from(left).unwrap_or(usize::MAX)),
            None => buf.len(),
        };
        let n = if room == 0 {
            0
        } else {
            self.request.as_reader().read(&mut buf[..room])?
        };
        if let Some(left) = &mut self.left {
            *left -= n as u64;
        }
        if n == 0 && !buf.is_empty() {
            self.finished = true;
        }
        Ok(n)
    }
}

impl Read for BodyReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.finished {
            return Ok(0);
        }
        if let Some(turn) = &mut self.turn {
            turn.give_back();
        }
        let read = self.read_from_client(buf);
        if matches!(read, Ok(0) | Err(_)) {
            if let Some(turn) = &mut self.turn {
                turn.take_again();
            }
        }
        read
    }
}
