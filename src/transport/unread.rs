//! The answer to a request whose body the handler refused before reading
//! it: a workaround for the HTTP library, off the normal path.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

use super::capacity::Slot;
use super::connection::{BodyReader, Framing, write};
use crate::http::Response;

/// The answer to a request whose body the handler refused before reading
/// it (415, 413, a missing item), after which the connection closes.
///
/// tiny_http reads and discards the rest of a body when its request is
/// dropped, and `into_writer` drops it before it gives the writer. So the
/// rest is read here first, up to [`READ_AT_MOST`] and within the body's
/// deadline, and the response then goes out as any other, saying
/// `Connection: close`. A client that waits for `100 Continue` before it
/// sends the rest, a larger body, or one that stops arriving would have
/// the response wait for a body never coming: then the response goes
/// through tiny_http's `respond`, which writes before it discards, on a
/// thread of its own that keeps the connection's slot until the library
/// has read the body's end. That response is the library's encoding: its
/// reason phrases (`413 Payload Too Large`, where RFC 9110 says `Content
/// Too Large`) and no `Connection` field, which it strips; the connection
/// closes after it all the same. (`tests/api/hardening.rs`,
/// `a_large_body_refused_unread_closes_the_connection`; `tests/api/wire.rs`,
/// `expect_100_continue_not_sent_when_refused_early`.)
pub(super) fn answer(
    mut incoming: tiny_http::Request,
    reply: &Response,
    date: &str,
    head_only: bool,
    framing: Framing,
    deadline: Instant,
    slot: &Arc<Slot>,
) -> io::Result<usize> {
    if !framing.expect && framing.length.is_none_or(|n| n <= READ_AT_MOST) {
        let mut body = BodyReader::new(&mut incoming, framing, deadline);
        let mut rest = (&mut body).take(READ_AT_MOST + 1);
        if io::copy(&mut rest, &mut io::sink()).is_ok() && body.finished {
            let bytes = reply.encode(date, head_only, Some("close"));
            return write(incoming, &bytes).map(|()| bytes.len());
        }
    }
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

/// The most of a body refused unread that is read so that our own response
/// can follow; see [`answer`].
const READ_AT_MOST: u64 = 1 << 20;
