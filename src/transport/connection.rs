//! One connection's requests, read, answered and written back one after
//! the other on the connection's own thread: the normal path of every
//! request, from the head tiny_http has parsed to the bytes on the wire.
//!
//! [`serve_connection`] loops: tiny_http reads the next request's head;
//! [`serve`] turns it into an [`http::Request`](crate::http::Request),
//! calls the handler, encodes the [`Response`] and writes it. HTTP/1.1
//! responses go in the order of the requests (RFC 9112 section 9.3.2), and
//! one thread per connection gives that order for free.
//!
//! Around the normal path, each of tiny_http's gaps is closed by one named
//! piece below, whose comment says the defect and the test that proves it:
//! [`Framing`] (framing the library would guess at), [`BodyReader`] (a
//! whole body's deadline, an upgrade offer's body), and in `unread.rs`
//! the answer to a body refused before it was read.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::capacity::Slot;
use super::lock;
use super::{access_log, stream, unread};
use crate::error::ApiError;
use crate::http::{Body, Handler, Method, READ_HEADERS, Request};

/// What every connection's thread shares, made once at start-up.
pub(crate) struct Shared {
    pub handler: Arc<dyn Handler>,
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
    /// `--read-timeout`: also the most a whole body may take.
    pub read_timeout: Duration,
    /// At most `--threads` requests are handled at once.
    pub turns: Turns,
    /// Whether access lines are logged (`--log-level info` or more).
    pub access_log: bool,
    /// The server is stopping: responses say `Connection: close`, and a
    /// delay is cut short.
    stopping: AtomicBool,
    /// Signalled when the server starts stopping, for those waiting out a
    /// delay.
    stopped: (Mutex<()>, Condvar),
}

impl Shared {
    pub fn new(handler: Arc<dyn Handler>, settings: &super::Settings) -> Shared {
        Shared {
            handler,
            max_body_bytes: settings.max_body_bytes,
            read_timeout: settings.read_timeout,
            turns: Turns::new(settings.threads),
            access_log: access_log::enabled(),
            stopping: AtomicBool::new(false),
            stopped: (Mutex::new(()), Condvar::new()),
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _guard = lock(&self.stopped.0);
        self.stopped.1.notify_all();
        self.handler.stop();
    }

    /// Waits until `due`, or until the server stops.
    fn wait_until(&self, due: Instant) {
        let mut guard = lock(&self.stopped.0);
        while !self.stopping() {
            let Some(left) = due.checked_duration_since(Instant::now()) else {
                return;
            };
            guard = self
                .stopped
                .1
                .wait_timeout(guard, left)
                .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
        }
    }
}

/// A connection's thread: reads each request (`requests` is tiny_http's
/// connection) and serves it, until the client or a response ends the
/// connection. Returning drops `requests`, which closes it.
pub(crate) fn serve_connection<E: std::fmt::Display>(
    shared: &Shared,
    requests: impl Iterator<Item = Result<tiny_http::Request, E>>,
    slot: Slot,
) {
    let slot = Arc::new(slot);
    for next in requests {
        // The slot says "waiting for a head" since it was taken or the last
        // response was written: tiny_http has just read one.
        slot.serving();
        let request = match next {
            Ok(request) => request,
            // tiny_http answered it (400, 408, 417) and reads no more.
            Err(err) => {
                log::debug!("connection ended: {err}");
                return;
            }
        };
        let keep_alive = serve(shared, request, &slot);
        slot.waiting();
        if !keep_alive {
            return;
        }
    }
}

/// Serves one request from its head to its response on the wire: the
/// normal path. `false` when the connection must close after it.
fn serve(shared: &Shared, mut incoming: tiny_http::Request, slot: &Arc<Slot>) -> bool {
    let started = Instant::now();
    // 1. The head as the application sees it; the body, as it reads it.
    let framing = Framing::of(&incoming);
    let refused = framing.error(&incoming);
    let mut head = Head::of(&incoming);
    // A body still on its way waits on its client, not on the CPU: such a
    // request is handled without a turn, or a few slow uploads would hold
    // every turn (`tests/api/hardening.rs`, `slow_uploads_do_not_hold_the_threads`).
    let mut turn = (!framing.arrives_slowly()).then(|| shared.turns.take());
    let deadline = started + shared.read_timeout;
    let mut body = BodyReader::new(&mut incoming, framing, deadline);
    let mut request = Request {
        method: head.method,
        method_name: &head.method_name,
        id: &head.id,
        target: &head.target,
        headers: std::mem::take(&mut head.headers),
        content_length: framing.length,
        body: &mut body,
        max_body_bytes: shared.max_body_bytes,
        body_read: None,
    };
    // 2. The handler; its panic is a 500, and the connection goes on.
    let handler = &*shared.handler;
    let was_refused = refused.is_some();
    let mut reply = match refused {
        Some(error) => handler.refuse(&request, error),
        None => catch_unwind(AssertUnwindSafe(|| handler.handle(&mut request)))
            .unwrap_or_else(|_| handler.refuse(&request, ApiError::Internal)),
    };
    drop(request);
    let unread = !body.finished && framing.arrives_slowly();
    reply.identify(head.id.clone());
    // 3. A response held back (`--delay`, `_delay`) waits without its turn.
    if !reply.delay.is_zero() {
        drop(turn.take());
        shared.wait_until(started + reply.delay);
    }
    // 4. Whether the connection closes after this response: the framing
    //    was refused, a body was left unread (what follows could pass for
    //    a request), the body stopped (408), the client asked, the server
    //    stops, no answer, or a stream, whose end is the connection's.
    let close = was_refused
        || unread
        || reply.status == 408
        || framing.close
        || shared.stopping.load(Ordering::SeqCst)
        || reply.unanswered
        || matches!(reply.body, Some((_, Body::Stream(_))));
    let connection = match (close, framing.keep_alive_10) {
        (true, _) => Some("close"),
        (false, true) => Some("keep-alive"),
        (false, false) => None,
    };
    let date = httpdate::fmt_http_date(SystemTime::now());
    let head_only = matches!(head.method, Method::Head);
    let sent = if reply.unanswered {
        // Nothing is written; the socket closes with the connection.
        drop(incoming.into_writer());
        Ok(0)
    } else if unread && !read_rest(&mut incoming, framing, deadline) {
        unread::answer(incoming, &reply, &date, slot)
    } else if let (Some((_, Body::Stream(body))), false) = (&reply.body, head_only) {
        stream::send(incoming, &reply.encode(&date, true, connection), body, turn)
    } else {
        let bytes = reply.encode(&date, head_only, connection);
        write(incoming, &bytes).map(|()| bytes.len())
    };
    // 5. One access-log line.
    match sent {
        Ok(bytes) if shared.access_log => head.log(reply.status, bytes, started),
        Ok(_) => {}
        Err(err) => {
            log::debug!("cannot send the response: {err}");
            return false;
        }
    }
    !close
}

/// What the application and the access log need of a request's head,
/// copied out of tiny_http's request, whose body the handler then
/// borrows.
struct Head {
    method: Method,
    /// The method as sent, for messages about unsupported ones.
    method_name: Cow<'static, str>,
    target: String,
    /// The fields of [`READ_HEADERS`] the request has.
    headers: Vec<(&'static str, String)>,
    /// The request's id (see [`request_id`]).
    id: String,
    remote: Option<SocketAddr>,
}

impl Head {
    fn of(incoming: &tiny_http::Request) -> Head {
        let method = Method::parse(incoming.method().as_str());
        let method_name = match method.name() {
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(incoming.method().as_str().to_string()),
        };
        let mut headers = Vec::new();
        for &name in READ_HEADERS {
            if let Some(value) = field(incoming, name) {
                headers.push((name, value.to_string()));
            }
        }
        Head {
            method,
            method_name,
            target: incoming.url().to_string(),
            id: request_id(&headers),
            headers,
            remote: incoming.remote_addr().copied(),
        }
    }

    /// The access-log line of this request, answered with `status` in
    /// `bytes` bytes.
    fn log(&self, status: u16, bytes: usize, started: Instant) {
        access_log::record(access_log::Line {
            remote: self.remote,
            method: &self.method_name,
            target: &self.target,
            status,
            bytes,
            elapsed: started.elapsed(),
            id: &self.id,
        });
    }
}

/// Reads what is left of a body the handler refused unread, so that our
/// own response can follow (`unread.rs`); `false` when it cannot be: the
/// client waits for `100 Continue`, or the body is too large or stops.
fn read_rest(incoming: &mut tiny_http::Request, framing: Framing, deadline: Instant) -> bool {
    if framing.expect || framing.length.is_some_and(|n| n > unread::READ_AT_MOST) {
        return false;
    }
    let mut body = BodyReader::new(incoming, framing, deadline);
    unread::read_rest(&mut body) && body.finished
}

/// Writes a whole response. `into_writer` gives the connection's writer.
fn write(incoming: tiny_http::Request, bytes: &[u8]) -> io::Result<()> {
    let mut writer = incoming.into_writer();
    writer.write_all(bytes)?;
    writer.flush()
}

/// At most `--threads` requests are handled at once: each takes a
/// [`Turn`] for its handler and its response's writing, and the others
/// wait for one. This bounds the memory and the CPU the server's work can
/// take, however many connections are open.
pub(crate) struct Turns {
    free: Mutex<usize>,
    freed: Condvar,
}

/// One request's turn; dropping it lets the next one go.
pub(crate) struct Turn<'a>(&'a Turns);

impl Turns {
    fn new(threads: usize) -> Turns {
        Turns {
            free: Mutex::new(threads.max(1)),
            freed: Condvar::new(),
        }
    }

    fn take(&self) -> Turn<'_> {
        // Nothing a panic could leave half done is under this lock.
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Turn(self)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

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
    expect: bool,
    /// `Connection: upgrade`.
    upgrade: bool,
    /// The `Content-Length`, when it is plain digits that fit in 64 bits.
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
            length: field(request, "Content-Length").and_then(content_length),
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

/// A `Content-Length` value as a number of octets (RFC 9112 section 6.2:
/// `1*DIGIT`). Read here into a `u64` rather than taken from tiny_http,
/// which reads it into a `usize`: on a 32-bit target a length over 4 GiB
/// does not fit one, and must still be refused as too large for
/// `--max-body-bytes` (413), as on a 64-bit one, not as unreadable framing.
fn content_length(value: &str) -> Option<u64> {
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    if digits { value.parse().ok() } else { None }
}

/// A header field's first value (tiny_http's `Headers` finds only the
/// first).
fn field<'a>(request: &'a tiny_http::Request, name: &str) -> Option<&'a str> {
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
pub(crate) struct BodyReader<'a> {
    request: &'a mut tiny_http::Request,
    deadline: Instant,
    /// Whether a read has reached the end of the body.
    pub finished: bool,
    /// The bytes still to come when the library's reader does not stop at
    /// the body's end (an upgrade offer).
    left: Option<u64>,
}

impl<'a> BodyReader<'a> {
    fn new(request: &'a mut tiny_http::Request, framing: Framing, deadline: Instant) -> Self {
        BodyReader {
            request,
            deadline,
            finished: !framing.chunked && framing.length.unwrap_or(0) == 0,
            left: framing.upgrade.then_some(framing.length.unwrap_or(0)),
        }
    }
}

impl Read for BodyReader<'_> {
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

/// The request's id, for its response's `X-Request-Id`, its access-log
/// line and its problem document's `instance`: the client's own when it is
/// sane ([`sane_request_id`]), else one made here. A client's id that is
/// not sane is replaced, never echoed: it could split the response's head
/// (CR LF) or forge a log line.
pub(crate) fn request_id(headers: &[(&'static str, String)]) -> String {
    for (name, id) in headers {
        if *name == "X-Request-Id" && sane_request_id(id) {
            return id.clone();
        }
    }
    made_request_id()
}
/// Whether a client's `X-Request-Id` may be echoed: 1 to 64 characters,
/// each an ASCII letter or digit or one of `-_.:`. That covers UUIDs,
/// ULIDs and the ids proxies make (nginx's `$request_id`, Heroku's), and
/// leaves out whitespace, control characters, quotes and everything else
/// that could mean something in a header field, a log line or JSON.
pub(crate) fn sane_request_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// A new request id: this process's prefix, a dash, and a counter (`3f9a0c12e4b7-1`,
/// `3f9a0c12e4b7-2`, ...). The prefix mixes the start time, the process id
/// and std's per-process random hash keys into 48 bits, so two runs of the
/// server, even two started in the same nanosecond, make different ids in
/// practice; the counter makes every id in a run different.
fn made_request_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    static PREFIX: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        let since = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        hasher.write_u128(since.as_nanos());
        hasher.write_u32(std::process::id());
        format!("{:012x}", hasher.finish() >> 16)
    });
    format!("{prefix}-{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}
