//! A response whose body is a stream ([`Body::Stream`], `/api/events`):
//! its head, then its body for as long as it lasts. The normal path
//! (`connection.rs`) comes here only for such a response.
//!
//! The response has no `Content-Length` and says `Connection: close`: its
//! body ends when the connection closes (RFC 9112 section 6.3, rule 8).
//! Chunked coding would let the connection serve another request after
//! it, but an event stream ends only when one side gives up, so nothing
//! would; and a body that is the rest of the connection is the plainest
//! there is to read on the wire.
//!
//! [`Body::Stream`]: crate::http::Body::Stream

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::body::write_all;
use crate::http::Stream;

/// Writes the head, gives back the request's turn (`turn`: whatever the
/// request holds of `--threads`, dropped here), then the body until it
/// ends; the bytes written. A stream that ends because its client left
/// (or stopped reading: a write blocked for `timeout`, `--write-timeout`)
/// has ended normally: logged, not an error. The connection closes when
/// the caller drops it.
pub(super) fn send<T>(
    incoming: tiny_http::Request,
    head: &[u8],
    body: &Stream,
    turn: T,
    timeout: Duration,
) -> io::Result<usize> {
    let mut writer = incoming.into_writer();
    // A subscriber listens for as long as it likes: it must not hold one of
    // the `--threads` turns meanwhile, or a few would stop every request.
    drop(turn);
    write_all(&mut writer, &[head], Instant::now() + timeout)?;
    let mut counted = Counted {
        out: &mut writer,
        bytes: head.len(),
        timeout,
    };
    if let Err(err) = body.0.send(&mut counted) {
        log::debug!("a stream ended: {err}");
    }
    Ok(counted.bytes)
}

/// A writer that counts what it writes, for the access log; each write
/// has `timeout` (the socket's own send timeout is a short tick: see
/// `body.rs`).
struct Counted<'a> {
    out: &'a mut dyn Write,
    bytes: usize,
    timeout: Duration,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write_all(self.out, &[buf], Instant::now() + self.timeout)?;
        self.bytes += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        write_all(self.out, &[], Instant::now() + self.timeout).map(drop)
    }
}
