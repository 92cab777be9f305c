//! The answer to a request whose body the handler refused before reading
//! it, after which the connection closes (413, 415, a missing item): a
//! workaround for the HTTP library, off the normal path.
//!
//! tiny_http reads and discards the rest of a body framed by
//! `Content-Length` when its request is dropped, and `into_writer` drops
//! it before it gives the writer, so our own response would wait for a
//! body that may never come. Its `respond` writes first, then reads the
//! rest. So:
//! - a body framed by `Content-Length` is answered at once through
//!   `respond`, on the connection's own thread, which then reads the rest
//!   of the body and drops it (as nginx's lingering close does, so that
//!   the answer is not lost to a reset). The answer is in the library's
//!   encoding: its reason phrases (`413 Payload Too Large`, where RFC 9110
//!   says `Content Too Large`) and no `Connection` field, which it strips;
//!   the connection closes after it all the same (`tests/api/framing.rs`,
//!   `a_refused_body_is_answered_on_its_head_then_drained`,
//!   `a_body_refused_unread_holds_one_thread_per_connection`). A client
//!   that waits for `100 Continue` sends no body: its answer is written,
//!   and the rest read, on a second thread, so that the connection's own
//!   thread lets go of the connection and the client sees its end at once
//!   (`a_refused_body_the_client_waits_to_send_gets_the_librarys_encoding_then_a_close`);
//! - a chunked body, or one sent with an upgrade offer, is not read by the
//!   library when dropped, and closing a socket with unread bytes resets
//!   it, losing the answer: its rest is read first ([`READ_AT_MOST`],
//!   within the body's deadline), then our own response says
//!   `Connection: close`. One that cannot be read so (a client waiting
//!   for `100 Continue`, a larger body, one that stops) goes through
//!   `respond` as well (`a_body_refused_unread_closes_the_connection_and_says_so`;
//!   `tests/api/wire.rs`, `expect_100_continue_not_sent_when_refused_early`).
//!
//! **Bound.** The library reads the rest until the body's end, the
//! client's close, or a silence of the read timeout; meanwhile the
//! connection counts as waiting for a head, so a drain longer than the
//! read timeout + 10 s counts as stuck for the watchdog (`accept.rs`).
//! One thread per connection, within `--max-connections`; two for a
//! client that waits for `100 Continue`, until it closes or the read
//! timeout.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::body::{BodyReader, Framing, write_all};
use super::capacity::{Doing, Slot};
use super::connection::Shared;
use super::lock;

use crate::http::Response;

/// The most of a chunked body refused unread that is read so that our own
/// response can follow.
pub(super) const READ_AT_MOST: u64 = 1 << 20;

/// Answers a request whose body was refused unread: see the module
/// comment. `ours` is the response in our own encoding, in parts; the
/// bytes written.
pub(super) fn answer(
    mut incoming: tiny_http::Request,
    reply: &Response,
    ours: &[&[u8]],
    framing: Framing,
    deadline: Instant,
    shared: &Shared,
    slot: &Arc<Slot>,
) -> io::Result<usize> {
    let library_drains = framing.length.is_some() && !framing.upgrade;
    if !library_drains && !framing.expect && read_rest(&mut incoming, framing, deadline) {
        let due = Instant::now() + shared.write_timeout;
        return write_all(&mut incoming.into_writer(), ours, due);
    }
    let date = httpdate::fmt_http_date(SystemTime::now());
    if framing.expect {
        return respond_apart(incoming, reply, &date, slot);
    }
    // From here the thread waits on the client, as for a request head.
    let peer = incoming.remote_addr().copied();
    *lock(&slot.doing) = Doing::Reading(Instant::now(), peer);
    respond(incoming, reply, &date)
}

/// [`respond`] on a thread of its own, which keeps the connection's slot
/// until the library has read the body's end: a client that waits for
/// `100 Continue` sends no body, and may wait for the connection's end,
/// which comes once the connection's own thread has let go of it.
fn respond_apart(
    incoming: tiny_http::Request,
    reply: &Response,
    date: &str,
    slot: &Arc<Slot>,
) -> io::Result<usize> {
    let (reply, date, slot) = (reply.clone(), date.to_string(), Arc::clone(slot));
    let length = reply.body_bytes().len();
    std::thread::Builder::new()
        .name("discard".into())
        .spawn(move || {
            if let Err(err) = respond(incoming, &reply, &date) {
                log::debug!("cannot send the response: {err}");
            }
            drop(slot);
        })
        .map(|_| length)
}

/// Reads and drops what is left of a chunked body (or an upgrade offer's),
/// up to [`READ_AT_MOST`] and by `deadline`: whether it ended, so that the
/// connection may carry our own response.
fn read_rest(incoming: &mut tiny_http::Request, framing: Framing, deadline: Instant) -> bool {
    let mut body = BodyReader::new(incoming, framing, deadline, None);
    let mut rest = (&mut body).take(READ_AT_MOST + 1);
    let read = io::copy(&mut rest, &mut io::sink());
    matches!(read, Ok(n) if n <= READ_AT_MOST) && body.finished
}

/// The response written by tiny_http's `respond`, which writes it before
/// it reads what is left of the body (when the body has a
/// `Content-Length`).
fn respond(incoming: tiny_http::Request, reply: &Response, date: &str) -> io::Result<usize> {
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
    incoming.respond(response).map(|()| length)
}
