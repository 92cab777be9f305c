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

use super::capacity::Slot;
use crate::http::{Response, Stream};

/// Writes the head of `reply` (dated `date`, with `connection` as its
/// `Connection` field), gives back the request's turn (`turn`: whatever
/// the request holds of `--threads`, dropped here), then the body until it
/// ends; the bytes written. From the head on, `slot` says the connection
/// streams: the stop does not wait for it. A stream that ends because its
/// client left (or stopped reading, `--write-timeout`) has ended normally:
/// logged, not an error. The connection closes when the caller drops it.
pub(super) fn send<T>(
    incoming: tiny_http::Request,
    reply: &Response,
    date: &str,
    connection: Option<&str>,
    body: &Stream,
    turn: T,
    slot: &Slot,
) -> io::Result<usize> {
    let head = reply.encode(date, true, connection);
    let chunked = *incoming.http_version() != tiny_http::HTTPVersion(1, 0);
    let mut writer = incoming.into_writer();
    match head.strip_suffix(b"\r\n") {
        Some(fields) if chunked => {
            writer.write_all(fields)?;
            writer.write_all(b"Transfer-Encoding: chunked\r\n\r\n")?;
        }
        _ => writer.write_all(&head)?,
    }
    writer.flush()?;
    slot.streaming();
    // A subscriber listens for as long as it likes: it must not hold one of
    // the `--threads` turns meanwhile, or a few would stop every request.
    drop(turn);
    let mut counted = Counted {
        out: &mut writer,
        bytes: head.len(),
        chunked,
    };
    let sent = body.0.send(&mut counted).and_then(|()| {
        if chunked {
            counted.out.write_all(b"0\r\n\r\n")?;
        }
        counted.out.flush()
    });
    if let Err(err) = sent {
        log::debug!("a stream ended: {err}");
    }
    Ok(counted.bytes)
}

/// A writer that counts what it writes, for the access log, and with
/// `chunked`, makes each write one chunk: its size in hexadecimal, CR LF,
/// the bytes, CR LF.
struct Counted<'a> {
    out: &'a mut dyn Write,
    bytes: usize,
    chunked: bool,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            // An empty chunk would end the body.
            return Ok(0);
        }
        if self.chunked {
            let size = format!("{:x}\r\n", buf.len());
            self.out.write_all(size.as_bytes())?;
            self.out.write_all(buf)?;
            self.out.write_all(b"\r\n")?;
        } else {
            self.out.write_all(buf)?;
        }
        self.bytes += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
