//! A request's body: how its header fields frame it (RFC 9112 section 6),
//! and the reader the handler gets.
//!
//! tiny_http frames bodies itself, but with gaps this file closes:
//! - it cannot see a `Content-Length` or `Transfer-Encoding` sent twice,
//!   nor a `Content-Length` that is not plain digits or does not fit in 64
//!   bits (it then reads no body, and the body would be read as the next
//!   request): [`Framing::error`] refuses them, and the connection closes
//!   (`tests/api/hardening.rs`, `ambiguous_framing_is_400...`,
//!   `a_content_length_beyond_64_bits...`);
//! - for a request that offers `Connection: upgrade` it hands over the raw
//!   connection as the body: [`BodyReader`] stops at the `Content-Length`
//!   (`an_upgrade_offer_with_a_body_is_ignored...`);
//! - it has no deadline for a whole body: [`BodyReader`] gives it the read
//!   timeout (`a_trickled_body_gets_408...`);
//! - it sends `100 Continue` as soon as the reader is asked for: we ask on
//!   the first read only, so a body refused unread is never invited
//!   (`tests/api/wire.rs`, `expect_100_continue_not_sent_when_refused_early`).

use std::io::{self, Read};
use std::time::Instant;

use super::library::Incoming;
use crate::error::ApiError;

/// What a request's header fields say about its body, looked up once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing {
    /// A `Content-Length` field is present.
    length_field: bool,
    /// A `Transfer-Encoding` field is present.
    chunked: bool,
    /// An `Expect` field is present (tiny_http admits only `100-continue`).
    expect: bool,
    /// `Connection: upgrade`.
    upgrade: bool,
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
    pub fn of(request: &impl Incoming) -> Framing {
        let connection = request.header("Connection");
        let asks = |token: &str| connection.is_some_and(|value| has_token(value, token));
        let upgrade = asks("upgrade");
        let keep_alive_10 = request.http_10() && asks("keep-alive") && !asks("close");
        Framing {
            length_field: request.header("Content-Length").is_some(),
            chunked: request.header("Transfer-Encoding").is_some(),
            expect: request.header("Expect").is_some(),
            upgrade,
            length: request.body_length(),
            close: asks("close") || upgrade || (request.http_10() && !keep_alive_10),
            keep_alive_10,
        }
    }

    /// Whether the request has a body, or fields that frame one. Only such
    /// a request can close its connection by what it sends (ambiguous
    /// framing, a body that stops, a body refused unread).
    pub fn has_body(self) -> bool {
        self.length_field || self.chunked
    }

    /// Whether nothing of the body is left on the connection before it is
    /// read: no body at all.
    pub fn empty(self) -> bool {
        !self.chunked && self.length.unwrap_or(0) == 0
    }

    /// Whether reading the body means waiting on the client. tiny_http
    /// reads a body of up to 1024 bytes before it hands the request over,
    /// unless the client waits for `100 Continue` or offers an upgrade;
    /// anything else comes off the socket as it is read.
    pub fn arrives_slowly(self) -> bool {
        self.chunked || self.expect || self.upgrade || self.length.is_some_and(|n| n > 1024)
    }

    /// Framing that tiny_http would guess at (RFC 9112 section 6.3).
    pub fn error(self, request: &impl Incoming) -> Option<ApiError> {
        let ambiguous = |why: String| {
            Some(ApiError::BadRequest {
                detail: format!("ambiguous message framing: {why}"),
                hint: None,
            })
        };
        for (name, present) in [
            ("Content-Length", self.length_field),
            ("Transfer-Encoding", self.chunked),
        ] {
            if present && request.repeats(name) {
                return ambiguous(format!("more than one {name} header"));
            }
        }
        if self.upgrade && self.chunked {
            return Some(ApiError::BadRequest {
                detail: "a chunked body with Connection: upgrade is not supported".into(),
                hint: Some(
                    "send the body with a Content-Length, or without the upgrade offer".into(),
                ),
            });
        }
        match request.header("Content-Length") {
            Some(value) if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) => {
                ambiguous(format!("Content-Length '{value}' is not a number"))
            }
            Some(value) if self.length.is_none() => {
                ambiguous(format!("Content-Length '{value}' is too large"))
            }
            _ => None,
        }
    }
}

/// Whether a header value mentions `token`, in any case (as tiny_http
/// matches them).
fn has_token(value: &str, token: &str) -> bool {
    value
        .as_bytes()
        .windows(token.len())
        .any(|w| w.eq_ignore_ascii_case(token.as_bytes()))
}

/// The body as the handler reads it: see the module comment.
pub(crate) struct BodyReader<'a, R> {
    request: &'a mut R,
    deadline: Instant,
    /// Whether a read has reached the end of the body.
    pub finished: bool,
    /// The bytes still to come when the library's reader does not stop at
    /// the body's end (an upgrade offer).
    left: Option<u64>,
}

impl<'a, R: Incoming> BodyReader<'a, R> {
    pub fn new(request: &'a mut R, framing: Framing, deadline: Instant) -> BodyReader<'a, R> {
        BodyReader {
            request,
            deadline,
            finished: framing.empty(),
            left: framing.upgrade.then_some(framing.length.unwrap_or(0)),
        }
    }
}

impl<R: Incoming> Read for BodyReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.finished {
            return Ok(0);
        }
        if Instant::now() > self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the body took longer than the read timeout",
            ));
        }
        let n = match self.left {
            Some(0) => 0,
            Some(left) => {
                let room = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let n = self.request.body().read(&mut buf[..room])?;
                self.left = Some(left - n as u64);
                n
            }
            None => self.request.body().read(buf)?,
        };
        if n == 0 && !buf.is_empty() {
            self.finished = true;
        }
        Ok(n)
    }
}
