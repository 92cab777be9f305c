//! The HTTP library behind one trait: [`Incoming`] is everything the
//! transport asks of a request tiny_http has read, and this file is the
//! only one that calls tiny_http's request API. The unit tests of
//! `connection.rs` implement it with a fake, so the transport's logic runs
//! there without sockets.
//!
//! Two of tiny_http's defects are worked around here:
//! - its `Headers` can be searched but not iterated, so whether a field
//!   appears twice ([`Incoming::repeats`]) is found on a copy;
//! - it discards the unread rest of a body when a request is dropped, and
//!   `into_writer` drops it before writing, so a response to a request whose
//!   body was refused unread goes through `respond`, which writes first
//!   ([`Incoming::send_before_discarding_body`]).

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::OnceLock;

use crate::http::Response;

/// A request as the HTTP library hands it over, with the way to answer it.
pub trait Incoming: Send + 'static {
    /// The method, as sent.
    fn method(&self) -> &str;
    /// The request target (RFC 9112 section 3.2): path and query.
    fn target(&self) -> &str;
    /// Whether the request line says `HTTP/1.0`.
    fn http_10(&self) -> bool;
    /// The first value of a header field.
    fn header(&self, name: &str) -> Option<&str>;
    /// Whether a header field present at least once occurs again.
    fn repeats(&self, name: &str) -> bool;
    /// The `Content-Length`, as the library parsed it.
    fn body_length(&self) -> Option<u64>;
    fn remote_addr(&self) -> Option<SocketAddr>;
    /// The body as the library frames it. The first read sends
    /// `100 Continue` to a client that expects it.
    fn body(&mut self) -> &mut dyn Read;
    /// Writes `bytes` as the whole response.
    fn send(self, bytes: &[u8]) -> io::Result<()>;
    /// Writes `reply`, then lets the library discard the unread body.
    fn send_before_discarding_body(self, reply: &Response, date: &str) -> io::Result<()>;
    /// Drops the request unanswered.
    fn discard(self);
}

impl Incoming for tiny_http::Request {
    fn method(&self) -> &str {
        tiny_http::Request::method(self).as_str()
    }

    fn target(&self) -> &str {
        self.url()
    }

    fn http_10(&self) -> bool {
        *self.http_version() == tiny_http::HTTPVersion(1, 0)
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers().get(name).map(|value| value.as_str())
    }

    /// `Headers` finds only the first match and cannot be iterated, so we
    /// look on a copy, renaming the first match before looking again.
    fn repeats(&self, name: &str) -> bool {
        static RENAMED: OnceLock<Option<tiny_http::HeaderField>> = OnceLock::new();
        let Some(renamed) = RENAMED.get_or_init(|| "X-Counted".parse().ok()) else {
            return false;
        };
        let mut headers = self.headers().clone();
        if let Some(first) = headers.get_header_mut(name) {
            first.field = renamed.clone();
        }
        headers.contains(name)
    }

    fn body_length(&self) -> Option<u64> {
        tiny_http::Request::body_length(self).map(|n| n as u64)
    }

    fn remote_addr(&self) -> Option<SocketAddr> {
        tiny_http::Request::remote_addr(self).copied()
    }

    fn body(&mut self) -> &mut dyn Read {
        self.as_reader()
    }

    fn send(self, bytes: &[u8]) -> io::Result<()> {
        // `into_writer` drops the request, and with it the body reader,
        // which reads whatever is left of the body: nothing, here.
        let mut writer = self.into_writer();
        writer.write_all(bytes)?;
        writer.flush()
    }

    /// tiny_http's own encoding of the head: its reason phrases and
    /// framing, and a `Content-Length: 0` even on a 204.
    fn send_before_discarding_body(self, reply: &Response, date: &str) -> io::Result<()> {
        let mut headers = vec![
            ("Date", date),
            ("Cache-Control", "no-cache"),
            ("Server", "widgets-todos"),
        ];
        if let Some((content_type, _)) = &reply.body {
            headers.push(("Content-Type", content_type));
        }
        headers.extend(
            reply
                .headers
                .iter()
                .map(|(name, value)| (*name, value.as_ref())),
        );
        let body = reply.body_bytes().to_vec();
        let length = body.len();
        let headers = tiny_http::Headers::try_from(headers)
            .map_err(|err| io::Error::other(err.to_string()))?;
        let response = tiny_http::Response::new(
            tiny_http::StatusCode(reply.status),
            headers,
            io::Cursor::new(body),
            Some(length),
            None,
        )
        // Always a Content-Length, never chunked, as our own encoding does.
        .with_chunked_threshold(usize::MAX);
        self.respond(response)
    }

    /// Taking the writer first keeps tiny_http from answering 500 on our
    /// behalf when the request is dropped.
    fn discard(self) {
        drop(self.into_writer());
    }
}
