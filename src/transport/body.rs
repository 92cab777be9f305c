//! Message bodies, both ways: what a request's head says of its body
//! ([`Framing`]) and the body as the handler reads it ([`BodyReader`]),
//! the gaps of tiny_http's framing closed on the normal path
//! (`connection.rs`); and a response on the wire ([`write_all`],
//! [`Unsent`]).
//!
//! # A request's body
//!
//! tiny_http frames a body itself, with gaps that [`Framing`] and
//! [`BodyReader`] close, each named in its comment. A body still
//! arriving waits on its client, not on the CPU: the reader gives the
//! request's turn of `--threads` back until the body's end.
//!
//! # A response on the wire
//!
//! One deadline for the whole response (`--write-timeout`), and a bound
//! on the memory that responses waiting on their clients hold. Neither
//! holds a turn of `--threads`: a client that stops reading (a crashed
//! test, a paused debugger, a phone that lost its network) waits on its
//! own.
//!
//! **The deadline.** tiny_http does not hand out its sockets, so a send
//! timeout can only be set on the listening socket, which every connection
//! inherits (`transport.rs`, `bind`), and it bounds one `send`, not a response:
//! a client reading a few bytes now and then would keep a response going
//! for as long as it likes. So the socket's send timeout is a short
//! [`TICK`], and [`write_all`] sends again after each tick that passes
//! without progress until the response's own deadline; then the
//! connection closes. A response is written within `--write-timeout`
//! plus one tick, however its client reads (`tests/api/turns.rs`,
//! `a_response_has_one_deadline_however_slowly_it_is_read`).
//!
//! **The memory.** A response is made whole before it is written, so a
//! client that does not read holds its bytes until the deadline. A body of
//! up to [`SMALL`] bytes is not counted (at most that much per open
//! connection); larger ones take their size from [`Unsent`], at most
//! [`UNSENT_MAX`] bytes in all, and are written after their head rather
//! than copied behind it. A large response that finds no room is answered
//! 503 with `Retry-After` instead (`connection.rs`, `answer`): only large
//! responses wait on the clients that hold the room, and everything else
//! is served as usual (`tests/api/turns.rs`,
//! `clients_that_never_read_hold_no_turn`; `scripts/abuse_turns.py`).

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tiny_http::HeaderFieldValue;

use super::connection::{Turn, Turns};
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
/// - it reads `Content-Length` into a `usize`, which on a 32-bit target
///   holds no more than 4 GiB: [`Framing::length`] is read here instead,
///   so such a length is 413 on every target (`tests/api/word_size.rs`);
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
    /// The `Content-Length`, when it is plain digits that fit in 64 bits.
    pub length: Option<u64>,
    /// The client asked to close the connection after this response, or
    /// speaks HTTP/1.0 without asking for keep-alive, or offered an upgrade
    /// (tiny_http then reads nothing more from the connection).
    pub close: bool,
    /// HTTP/1.0 with `Connection: keep-alive`: said back in the response.
    pub keep_alive_10: bool,
    /// Reading the body means waiting on the client. tiny_http reads a
    /// body of up to 1024 bytes before it hands the request over, unless
    /// the client waits for `100 Continue` or offers an upgrade; anything
    /// else comes off the socket as it is read.
    pub slow: bool,
}

impl Framing {
    pub fn of(request: &tiny_http::Request) -> Framing {
        let headers = request.headers();
        let http_10 = *request.http_version() == tiny_http::HTTPVersion(1, 0);
        let (mut upgrade, mut close, mut keep_alive) = (false, false, false);
        if let Some(connection) = headers.get("Connection") {
            let connection = connection.as_str();
            upgrade = has_token(connection, "upgrade");
            close = has_token(connection, "close");
            keep_alive = has_token(connection, "keep-alive");
        }
        let keep_alive_10 = http_10 && keep_alive && !close;
        let length_field = headers.get("Content-Length");
        let length = length_field
            .map(HeaderFieldValue::as_str)
            .and_then(content_length);
        let chunked = headers.get("Transfer-Encoding").is_some();
        let expect = headers.get("Expect").is_some();
        Framing {
            length_field: length_field.is_some(),
            chunked,
            expect,
            upgrade,
            length,
            close: close || upgrade || (http_10 && !keep_alive_10),
            keep_alive_10,
            slow: chunked || expect || upgrade || matches!(length, Some(n) if n > 1024),
        }
    }

    /// Framing or a head that tiny_http would serve as something it is
    /// not; see the type's comment.
    pub fn error(self, request: &tiny_http::Request) -> Option<ApiError> {
        let headers = request.headers();
        let host = headers.get("Host");
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
        if let Some(coding) = headers.get("Transfer-Encoding") {
            let coding = coding.as_str();
            if !coding.trim().eq_ignore_ascii_case("chunked") {
                return Some(ApiError::NotImplemented {
                    detail: format!(
                        "Transfer-Encoding '{coding}': this server decodes only chunked"
                    ),
                });
            }
            // RFC 9112 section 6.3: both fields "ought to be handled as an
            // error". tiny_http refuses them itself, except when it could
            // not read the Content-Length into a `usize` (over 4 GiB on a
            // 32-bit target): then it would decode the chunked body.
            if self.length_field {
                return Some(ApiError::bad_request(
                    "ambiguous message framing: both Content-Length and Transfer-Encoding",
                ));
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
        let length = headers.get("Content-Length")?.as_str();
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

/// A `Content-Length` value as a number of octets (RFC 9112 section 6.2:
/// `1*DIGIT`). Read here into a `u64` rather than taken from tiny_http,
/// which reads it into a `usize`: on a 32-bit target a length over 4 GiB
/// does not fit one, and must still be refused as too large for
/// `--max-body-bytes` (413), as on a 64-bit one, not as unreadable framing.
fn content_length(value: &str) -> Option<u64> {
    let digits = !value.is_empty() && value.as_bytes().iter().all(u8::is_ascii_digit);
    if digits { value.parse().ok() } else { None }
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
/// for the rest of its handler (`tests/api/framing.rs`,
/// `slow_uploads_do_not_hold_the_threads`; `tests/api/turns.rs`,
/// `every_framing_takes_a_turn`).
pub(crate) struct BodyReader<'a, 't> {
    request: &'a mut tiny_http::Request,
    deadline: Instant,
    /// Whether a read has reached the end of the body.
    pub finished: bool,
    /// The bytes still to come when the library's reader does not stop at
    /// the body's end (an upgrade offer).
    left: Option<u64>,
    /// The request's turn, and the turns to take it again from, when the
    /// body arrives from the socket as it is read (`Framing::slow`).
    turn: Option<(&'a mut Option<Turn<'t>>, &'t Turns)>,
}

impl<'a, 't> BodyReader<'a, 't> {
    pub(super) fn new(
        request: &'a mut tiny_http::Request,
        framing: Framing,
        deadline: Instant,
        turn: Option<(&'a mut Option<Turn<'t>>, &'t Turns)>,
    ) -> Self {
        BodyReader {
            request,
            deadline,
            finished: !framing.chunked && framing.length.unwrap_or(0) == 0,
            left: framing.upgrade.then_some(framing.length.unwrap_or(0)),
            turn: if framing.slow { turn } else { None },
        }
    }
}

impl Read for BodyReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.finished {
            return Ok(0);
        }
        // The body comes from the client: the turn is given back meanwhile.
        if let Some((turn, _)) = &mut self.turn {
            **turn = None;
        }
        let room = match self.left {
            Some(left) => buf.len().min(usize::try_from(left).unwrap_or(usize::MAX)),
            None => buf.len(),
        };
        let read = if Instant::now() > self.deadline {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the body took longer than the read timeout",
            ))
        } else if room == 0 {
            Ok(0)
        } else {
            self.request.as_reader().read(&mut buf[..room])
        };
        if let Ok(n) = read {
            if let Some(left) = &mut self.left {
                *left -= n as u64;
            }
            self.finished = n == 0 && !buf.is_empty();
        }
        // At the body's end, or when it failed, the handler goes on with a
        // turn again.
        if let (Some((turn, turns)), Ok(0) | Err(_)) = (&mut self.turn, &read)
            && turn.is_none()
        {
            **turn = Some(turns.take());
        }
        read
    }
}

/// The socket's send timeout: how long one `send` may block before
/// [`write_all`] looks at the response's deadline again.
pub const TICK: Duration = Duration::from_millis(250);

/// A response body up to this size is written without taking room in
/// [`Unsent`].
pub const SMALL: usize = 16 * 1024;

/// The most the bodies of responses being written may hold at once,
/// beyond those of [`SMALL`] size: four lists of 100,000 todos as
/// `--generate` makes them (7.2 MB each).
pub const UNSENT_MAX: usize = 32 * 1024 * 1024;

/// Writes all of `parts`, one after the other, and flushes them by
/// `deadline`; the bytes written. A send that blocks for a [`TICK`] (the
/// socket reports it as `WouldBlock`) is tried again until then; past it,
/// the error is `TimedOut`.
pub fn write_all(out: &mut dyn Write, parts: &[&[u8]], deadline: Instant) -> io::Result<usize> {
    let mut written = 0;
    for &part in parts {
        written += part.len();
        let mut bytes = part;
        while !bytes.is_empty() {
            match out.write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) if n == bytes.len() => bytes = &[],
                // A send cut short by the tick: the client reads, but slowly.
                Ok(n) => {
                    bytes = &bytes[n..];
                    again(io::ErrorKind::WouldBlock.into(), deadline)?;
                }
                Err(err) => again(err, deadline)?,
            }
        }
    }
    loop {
        match out.flush() {
            Ok(()) => return Ok(written),
            Err(err) => again(err, deadline)?,
        }
    }
}

/// `Ok` when a failed send may be tried again: it was interrupted, or it
/// blocked for a tick and the deadline has not passed.
fn again(err: io::Error, deadline: Instant) -> io::Result<()> {
    match err.kind() {
        io::ErrorKind::Interrupted => Ok(()),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if Instant::now() < deadline => Ok(()),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client read the response too slowly (--write-timeout)",
        )),
        _ => Err(err),
    }
}

/// The room for response bodies being written: see the module comment.
pub(crate) struct Unsent {
    taken: AtomicUsize,
}

/// A response's room in [`Unsent`], given back when dropped (once the
/// response is written, or its connection closed).
pub(crate) struct Room<'a> {
    unsent: &'a Unsent,
    bytes: usize,
}

impl Unsent {
    pub fn new() -> Unsent {
        Unsent {
            taken: AtomicUsize::new(0),
        }
    }

    /// Room for a body of `bytes`; `None` when there is not enough.
    pub fn take(&self, bytes: usize) -> Option<Room<'_>> {
        if bytes <= SMALL {
            return Some(Room {
                unsent: self,
                bytes: 0,
            });
        }
        let taken = self.taken.fetch_add(bytes, Ordering::Relaxed);
        if taken + bytes > UNSENT_MAX {
            self.taken.fetch_sub(bytes, Ordering::Relaxed);
            return None;
        }
        Some(Room {
            unsent: self,
            bytes,
        })
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.unsent.taken.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
