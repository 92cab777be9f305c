//! One connection's requests, read, answered and written back one after
//! the other on the connection's own thread: the normal path of every
//! request, from the head tiny_http has parsed to the bytes on the wire.
//!
//! [`serve_connection`] loops: tiny_http reads the next request's head;
//! [`serve`] turns it into an [`http::Request`](crate::http::Request),
//! calls the handler, encodes the [`Response`] and writes it. Meanwhile
//! the connection's slot says what its thread is doing ([`Doing`]:
//! serving, or reading the next head since when), for the watchdog and
//! the stop (`capacity.rs`). HTTP/1.1
//! responses go in the order of the requests (RFC 9112 section 9.3.2), and
//! one thread per connection gives that order for free.
//!
//! Every request's handler holds a [`Turn`] of `--threads`, and nothing
//! else does: not a body still arriving, not a response held back by a
//! delay, not a response on its way to a client (`body.rs`).
//!
//! Around the normal path, each of tiny_http's gaps is closed by one named
//! piece, whose comment says the defect and the test that proves it: in
//! `body.rs`, `Framing` (framing the library would guess at) and
//! `BodyReader` (a whole body's deadline, an upgrade offer's body); in
//! `body.rs`, a whole response's deadline; in `unread.rs`, the answer to
//! a body refused before it was read.

use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::body::{self, BodyReader, Framing, Room, Unsent};
use super::capacity::{Doing, Slot};
use super::lock;
use super::{access_log, stream, unread};
use crate::error::ApiError;
use crate::http::{Body, Handler, Method, READ_HEADERS, Request, Response};

/// What every connection's thread shares, made once at start-up.
pub(crate) struct Shared {
    pub handler: Arc<dyn Handler>,
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
    /// `--read-timeout`: also the most a whole body may take.
    pub read_timeout: Duration,
    /// `--write-timeout`: the most a whole response may take.
    pub write_timeout: Duration,
    /// The room for responses waiting on their clients.
    unsent: Unsent,
    /// At most `--threads` requests are handled at once.
    pub turns: Turns,
    /// Whether access lines are logged (`--log-level info` or more, and
    /// no `--quiet`): decided once, so that a quiet server's request
    /// tests one `bool`.
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
            write_timeout: settings.write_timeout,
            unsent: Unsent::new(),
            turns: Turns::new(settings.threads),
            access_log: settings.access_log && access_log::enabled(),
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
/// connection. Returning drops `requests`, which closes it. The slot says
/// what the thread is doing, for the accept loop, the watchdog and the
/// stop (`capacity.rs`).
pub(crate) fn serve_connection<E: std::fmt::Display>(
    shared: &Shared,
    requests: impl Iterator<Item = Result<tiny_http::Request, E>>,
    slot: Slot,
) {
    let slot = Arc::new(slot);
    for next in requests {
        let request = match next {
            Ok(request) => request,
            // tiny_http answered it (400, 408, 417) and reads no more.
            Err(err) => {
                log::debug!("connection ended: {err}");
                return;
            }
        };
        // The slot said "reading a head" since it was taken or the last
        // response was written: tiny_http has just read one.
        let peer = request.remote_addr().copied();
        *lock(&slot.doing) = Doing::Serving;
        if !serve(shared, request, &slot) {
            // Never idle, nor closed for a newcomer: a refusal's answer may
            // still be written (`unread.rs`).
            *lock(&slot.doing) = Doing::Closing;
            return;
        }
        // Idle: it has answered, and the client's address is known.
        *lock(&slot.doing) = Doing::Reading(Instant::now(), peer);
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
    // Every request's handler holds a turn, whatever its framing; the
    // reader gives it back while a body arrives (`BodyReader`).
    let mut turn = Some(shared.turns.take());
    let deadline = started + shared.read_timeout;
    let turns = Some((&mut turn, &shared.turns));
    let mut body = BodyReader::new(&mut incoming, framing, deadline, turns);
    // 2. The handler, and the room its response takes while it is sent.
    let was_refused = refused.is_some();
    let (mut reply, _room) = answer(shared, &mut head, &mut body, framing, refused);
    let unread = !body.finished && framing.slow;
    reply.identify(head.id.clone());
    // 3. A response held back (`--delay`, `_delay`) waits without its turn.
    if !reply.delay.is_zero() {
        turn = None;
        shared.wait_until(started + reply.delay);
    }
    // 4. The connection closes after this response when the head was
    //    refused or a body left unread (what follows could pass for a
    //    request), the client asked (`Framing::close`), the server stops,
    //    the body stopped (408), or the response ends only with the
    //    connection: no answer (`_fault=close`), or a stream.
    let close = was_refused
        || unread
        || framing.close
        || shared.stopping.load(Ordering::SeqCst)
        || reply.status == 408
        || reply.unanswered
        || matches!(reply.body, Some((_, Body::Stream(_))));
    let connection = match (close, framing.keep_alive_10) {
        (true, _) => Some("close"),
        (false, true) => Some("keep-alive"),
        (false, false) => None,
    };
    // 5. The response on the wire, without the turn: a client that reads
    //    slowly, sends the rest of a body refused unread, or listens to a
    //    stream for as long as it likes, waits alone. A large body is
    //    written after its head, not copied behind it.
    let head_only = matches!(head.method, Method::Head);
    let content = reply.body_bytes();
    let apart = !head_only && content.len() > body::SMALL;
    let date = httpdate::fmt_http_date(SystemTime::now());
    let bytes = reply.encode(&date, head_only || apart, connection);
    drop(turn);
    let parts = [&bytes[..], if apart { content } else { &[] }];
    let sent = if reply.unanswered {
        // Nothing written: the socket closes with the connection.
        drop(incoming.into_writer());
        Ok(0)
    } else if let (Some((_, Body::Stream(stream))), false) = (&reply.body, head_only) {
        stream::send(incoming, &bytes, stream, slot, shared.write_timeout)
    } else if unread {
        unread::answer(incoming, &reply, &parts, framing, deadline, shared, slot)
    } else {
        let due = Instant::now() + shared.write_timeout;
        body::write_all(&mut incoming.into_writer(), &parts, due)
    };
    // 6. One access-log line.
    match &sent {
        Ok(bytes) if shared.access_log => head.log(&reply, *bytes, started),
        Ok(_) => {}
        Err(err) => log::debug!("cannot send the response: {err}"),
    }
    sent.is_ok() && !close
}

/// The handler's response to the request of `head` and `body` (its
/// panic is a 500; a head `refused` is answered without it), and the room
/// the response takes while it is sent (`body.rs`). A large response that
/// finds no room is dropped for a 503 that says when to retry.
fn answer<'s>(
    shared: &'s Shared,
    head: &mut Head,
    body: &mut BodyReader<'_, 's>,
    framing: Framing,
    refused: Option<ApiError>,
) -> (Response, Option<Room<'s>>) {
    let request = &mut Request {
        method: head.method,
        method_name: &head.method_name,
        id: &head.id,
        target: &head.target,
        headers: std::mem::take(&mut head.headers),
        content_length: framing.length,
        body,
        max_body_bytes: shared.max_body_bytes,
        body_read: None,
    };
    let handler = &*shared.handler;
    let reply = match refused {
        Some(error) => handler.refuse(request, error),
        None => catch_unwind(AssertUnwindSafe(|| handler.handle(request)))
            .unwrap_or_else(|_| handler.refuse(request, ApiError::Internal)),
    };
    let size = reply.body_bytes().len();
    if size <= body::SMALL {
        return (reply, None);
    }
    if let Some(room) = shared.unsent.take(size) {
        return (reply, Some(room));
    }
    log::warn!(target: crate::logging::LOG, "a response of {size} bytes answered 503: responses waiting on their clients hold {} MiB already",
        body::UNSENT_MAX >> 20
    );
    let busy = ApiError::Unavailable {
        detail:
            "the server holds as many large responses as it may for clients still reading theirs"
                .into(),
    };
    let busy = handler
        .refuse(request, busy)
        .with_header("Retry-After", "1");
    (busy, None)
}

/// What the application and the access log need of a request's head,
/// copied out of tiny_http's request, whose body the handler then
/// borrows.
struct Head {
    method: Method,
    /// The method as sent, for messages about unsupported ones.
    method_name: String,
    target: String,
    /// The fields of [`READ_HEADERS`] the request has.
    headers: Vec<(&'static str, String)>,
    /// The request's id (see [`request_id`]).
    id: String,
    remote: Option<SocketAddr>,
}

impl Head {
    fn of(incoming: &tiny_http::Request) -> Head {
        let method_name = incoming.method().as_str().to_string();
        let method = Method::parse(&method_name);
        let mut headers = Vec::new();
        for &name in READ_HEADERS {
            if let Some(value) = incoming.headers().get(name) {
                headers.push((name, value.as_str().to_string()));
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

    /// The access-log line of this request, answered with `reply` in
    /// `bytes` bytes.
    fn log(&self, reply: &Response, bytes: usize, started: Instant) {
        access_log::record(access_log::Line {
            remote: self.remote,
            method: &self.method_name,
            target: &self.target,
            status: reply.status,
            probe: reply.probe,
            bytes,
            elapsed: started.elapsed(),
            id: &self.id,
        });
    }
}

/// At most `--threads` requests are handled at once: each takes a
/// [`Turn`] for its handler, and the others wait for one. This bounds the
/// memory and the CPU the server's work can take, however many
/// connections are open. A turn is held only while the server works:
/// never while a body arrives (`BodyReader` gives it back meanwhile), a
/// response waits out a delay, or a client reads its response.
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

    pub(super) fn take(&self) -> Turn<'_> {
        let mut free = lock(&self.free);
        while *free == 0 {
            // Nothing a panic could leave half done is under this lock.
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
        *lock(&self.0.free) += 1;
        self.0.freed.notify_one();
    }
}

/// The request's id, for its response's `X-Request-Id`, its access-log
/// line and its problem document's `instance`: the client's own when it is
/// sane ([`sane_request_id`]), else one made here. A client's id that is
/// not sane is replaced, never echoed: it could split the response's head
/// (CR LF) or forge a log line.
///
/// An id made here is this process's prefix, a dash, and a counter
/// (`3f9a0c12e4b7-1`, `3f9a0c12e4b7-2`, ...). The prefix mixes the start
/// time, the process id and std's per-process random hash keys into 48
/// bits, so two runs of the server, even two started in the same
/// nanosecond, make different ids in practice; the counter makes every id
/// in a run different.
pub(crate) fn request_id(headers: &[(&'static str, String)]) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    static PREFIX: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    for (name, id) in headers {
        if *name == "X-Request-Id" && sane_request_id(id) {
            return id.clone();
        }
    }
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
