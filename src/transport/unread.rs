//! The answer to a request whose body the handler refused before reading
//! it, after which the connection closes (415, 413, a missing item): a
//! workaround for the HTTP library, off the normal path.
//!
//! tiny_http reads and discards the rest of a body when its request is
//! dropped, and `into_writer` drops it before it gives the writer. So
//! `connection.rs` reads the rest first ([`read_rest`], up to
//! [`READ_AT_MOST`] and within the body's deadline), and the response then
//! goes out as any other, saying `Connection: close`. A client that waits
//! for `100 Continue` before it sends the rest, a larger body, or one that
//! stops arriving would have the response wait for a body never coming:
//! then [`answer`] hands the response to tiny_http's `respond`, which
//! writes before it discards. (`tests/api/framing.rs`,
//! `a_body_refused_unread_closes_the_connection_and_says_so`;
//! `tests/api/wire.rs`, `expect_100_continue_not_sent_when_refused_early`.)

use std::io::{self, Read};
use std::sync::Arc;

use super::capacity::Slot;
use crate::http::Response;

/// The most of a body refused unread that is read so that our own response
/// can follow.
pub(super) const READ_AT_MOST: u64 = 1 << 20;

/// Reads and drops what is left of a body, from the reader the handler
/// had: whether it ended, so that the connection may carry our response.
pub(super) fn read_rest(body: &mut impl Read) -> bool {
    let mut rest = body.take(READ_AT_MOST + 1);
    matches!(io::copy(&mut rest, &mut io::sink()), Ok(n) if n <= READ_AT_MOST)
}

/// The response to a request whose body could not be read to its end,
/// written by tiny_http's `respond`, which writes before it reads what is
/// left, on a thread of its own that keeps the connection's slot until
/// then. It is the library's encoding: its reason phrases (`413 Payload
/// Too Large`, where RFC 9110 says `Content Too Large`) and no
/// `Connection` field, which it strips; the connection closes after it
/// all the same.
pub(super) fn answer(
    incoming: tiny_http::Request,
    reply: &Response,
    date: &str,
    slot: &Arc<Slot>,
) -> io::Result<usize> {
    let mut headers = vec![("Date", date), ("Cache-Control", "no-cache")];
    if let Some((content_type, _)) = &reply.body {
        headers.push(("Content-Type", content_type));
    }
    headers.extend(reply.headers.iter().map(|(name, value)| (*name, &**value)));
    let body = reply.body_bytes().to_vec();
    let length = body.len();
    let headers =
        tiny_http::Headers::try_from(headers).map_err(|err| io::Error::other(err.to_string()))?;
    let response = tiny_http::Response::new(
        tiny_http::StatusCode(reply.status),
        headers,
        io::Cursor::new(body),
        Some(length),
        None,
    )
    // Always a Content-Length, never chunked, as our own encoding does.
    .with_chunked_threshold(usize::MAX);
    let slot = Arc::clone(slot);
    std::thread::Builder::new()
        .name("discard".into())
        .spawn(move || {
            if let Err(err) = incoming.respond(response) {
                log::debug!("cannot send the response: {err}");
            }
            drop(slot);
        })
        .map(|_| length)
}
