//! A response whose body is a stream ([`Body::Stream`], `/api/events`):
//! its head, then its body for as long as it lasts. The normal path
//! (`connection.rs`) comes here only for such a response.
//!
//! The response has no `Content-Length` (its length is not known when it
//! starts). To an HTTP/1.1 request its body is sent with the chunked
//! transfer coding (RFC 9112 section 7.1), as other servers of
//! server-sent events do, one chunk for each write of the stream: a
//! client that reads the body in blocks of a fixed size (Python's
//! `requests` with `iter_content`, under sseclient-py) gets each chunk as
//! it comes, where with a body delimited by the connection's close it
//! would wait for its block to fill. The last chunk (`0`) ends the body.
//! An HTTP/1.0 client, which cannot read chunks, gets the body as the rest
//! of the connection (section 6.3, rule 8). Either way the response says
//! `Connection: close`: an event stream ends only when one side gives up,
//! so the connection would rarely serve anything after it.
//!
//! [`Body::Stream`]: crate::http::Body::Stream

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::body::write_all;
use super::capacity::{Doing, Slot};
use super::lock;
use crate::http::Stream;

/// Writes `head` (the response's head as encoded, which this adds
/// `Transfer-Encoding: chunked` to for an HTTP/1.1 client), then the body
/// until it ends; the bytes written. It is called without the request's
/// turn of `--threads`: a subscriber listens for as long as it likes, and
/// a few holding turns would stop every request. From the head on, `slot`
/// says the connection streams: the stop does not wait for it. A stream
/// that ends because its client left (or stopped reading: a write blocked
/// for `timeout`, `--write-timeout`) has ended normally: logged, not an
/// error. The connection closes when the caller drops it.
pub(super) fn send(
    incoming: tiny_http::Request,
    head: &[u8],
    body: &Stream,
    slot: &Slot,
    timeout: Duration,
) -> io::Result<usize> {
    let chunked = *incoming.http_version() != tiny_http::HTTPVersion(1, 0);
    let peer = incoming.remote_addr().copied();
    let mut writer = incoming.into_writer();
    let due = Instant::now() + timeout;
    match head.strip_suffix(b"\r\n") {
        Some(fields) if chunked => write_all(
            &mut writer,
            &[fields, b"Transfer-Encoding: chunked\r\n\r\n"],
            due,
        )?,
        _ => write_all(&mut writer, &[head], due)?,
    };
    *lock(&slot.doing) = Doing::Streaming(peer);
    let mut counted = Counted {
        out: &mut writer,
        bytes: head.len(),
        chunked,
        timeout,
    };
    let sent = body.0.send(&mut counted).and_then(|()| {
        let last: &[u8] = if chunked { b"0\r\n\r\n" } else { b"" };
        write_all(counted.out, &[last], Instant::now() + timeout).map(drop)
    });
    if let Err(err) = sent {
        log::debug!("a stream ended: {err}");
    }
    Ok(counted.bytes)
}

/// A writer that counts what it writes, for the access log, and with
/// `chunked`, makes each write one chunk: its size in hexadecimal, CR LF,
/// the bytes, CR LF. Each write has `timeout` (the socket's own send
/// timeout is a short tick: see `body.rs`).
struct Counted<'a> {
    out: &'a mut dyn Write,
    bytes: usize,
    chunked: bool,
    timeout: Duration,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            // An empty chunk would end the body.
            return Ok(0);
        }
        let due = Instant::now() + self.timeout;
        if self.chunked {
            let size = format!("{:x}\r\n", buf.len());
            write_all(self.out, &[size.as_bytes(), buf, b"\r\n"], due)?;
        } else {
            write_all(self.out, &[buf], due)?;
        }
        self.bytes += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        write_all(self.out, &[], Instant::now() + self.timeout).map(drop)
    }
}
