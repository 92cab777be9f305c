//! One connection's requests, one request's trip through a worker, and the
//! rules that keep one client from hurting the others.
//!
//! A connection thread (`server.rs`) reads a connection's requests with
//! tiny_http and hands each to [`Connections::read`]; workers serve them
//! with [`Connections::serve`]. From there:
//!
//! 1. **Lanes.** A connection is served by at most one worker at a time.
//!    tiny_http writes responses in request order, so a second worker that
//!    took a pipelined request from the same connection would only wait
//!    for the first; a client that never reads its responses would then
//!    pin every worker. Instead a request whose connection is being served
//!    waits in that connection's lane, and the worker serving it takes it
//!    next. The lane holds one request: the connection thread reads the
//!    next, then waits until the worker takes the one waiting. A client
//!    that pipelines waits in its own socket buffer, and memory per
//!    connection stays bounded however much it sends. Without pipelining a
//!    request often arrives while the worker is still finishing the
//!    previous response; it waits in the lane, and the connection thread
//!    goes back to reading without a wake-up of its own.
//! 2. **Condemned connections.** After a framing error, a body that
//!    stopped arriving, or a write that failed or timed out, nothing more
//!    is served on that connection, and its response says
//!    `Connection: close` (unless tiny_http writes it: a request refused
//!    before its body was read). Its thread closes it when its next request
//!    arrives, or the read timeout does. A request with a body may condemn
//!    its connection, so one read behind it waits until its worker has
//!    decided, and the connection is closed at once if it does.
//! 3. **TLS.** tiny_http's TLS stream is one lock for reading and writing,
//!    so a connection thread blocked reading the next request would keep
//!    the response from being written. Over TLS the connection thread waits
//!    until every response is written before it reads again.
//! 4. **One exchange** ([`serve`]): framing checks, the handler under
//!    `catch_unwind` (a panic is a 500 and the worker lives on), the reply
//!    encoded and written in one go, one access-log line.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::access_log;
use crate::capacity::Slot;
use crate::cors::{Asked, Cors};
use crate::delay::Delays;
use crate::error::ApiError;
use crate::request::{Body, Method, Request};
use crate::response::Reply;

/// What answers a request: the router in production, anything in tests.
pub type Handler = dyn Fn(&mut Request<'_>) -> Reply + Send + Sync;

/// What every connection and exchange needs: the handler, the settings,
/// the responses held back, and whether the server is stopping. Cloned
/// for a thread of its own.
#[derive(Clone)]
pub struct Connections {
    handler: Arc<Handler>,
    settings: Arc<Settings>,
    delays: Arc<Delays>,
    stopping: Arc<AtomicBool>,
}

/// A request ready for a worker.
pub struct Exchange {
    next: Waiting,
    conn: Arc<Conn>,
}

/// What a connection's thread and the workers serving it share.
struct Conn {
    lane: Mutex<Lane>,
    /// Signalled, while the connection thread waits, when the lane empties
    /// or the last response is written.
    settled: Condvar,
    secure: bool,
    /// The connection's place in the server's capacity, held until the
    /// connection's thread is done and its last response written.
    slot: Slot,
}

#[derive(Default)]
struct Lane {
    /// Whether a worker is serving this connection.
    busy: bool,
    /// Whether the request being served has a body, and so may condemn
    /// the connection (see [`Framing::has_body`]), and its worker has not
    /// decided yet whether it does.
    undecided: bool,
    /// The request waiting for that worker.
    waiting: Option<Waiting>,
    /// Nothing more is served on this connection.
    condemned: bool,
    /// Requests not yet answered or dropped (counted over TLS only).
    unwritten: usize,
    /// Whether the connection thread waits on `settled`.
    reader_waits: bool,
}

/// A request read from a connection, with what its headers say about its
/// body (looked up once, by the connection thread).
struct Waiting {
    request: tiny_http::Request,
    framing: Framing,
    written: Written,
}

/// Held with a request until its response is written or the request is
/// dropped: it keeps the connection's slot, and over TLS its drop lets the
/// connection thread read again.
pub(crate) struct Written(Arc<Conn>);

impl Drop for Written {
    fn drop(&mut self) {
        let conn = &self.0;
        if conn.secure {
            let mut lane = lock(&conn.lane);
            lane.unwritten -= 1;
            if lane.unwritten == 0 && lane.reader_waits {
                conn.settled.notify_all();
            }
        }
    }
}

/// What becomes of a request read from a connection.
enum Offer {
    /// For a worker now.
    Serve(Exchange),
    /// Waiting in the lane for the worker serving its connection. `settle`
    /// when the request being served may yet condemn the connection: the
    /// connection thread then waits for the worker to decide, to close the
    /// connection at once if it does.
    Queued { settle: bool },
    /// The connection is condemned: drop the request and the connection.
    Refused(tiny_http::Request),
}

impl Conn {
    /// Offers a request read from the connection. If one already waits in
    /// the lane, first waits until the worker takes it: the connection
    /// thread reads no more meanwhile, so the lane holds one request at
    /// most.
    fn offer(self: &Arc<Self>, request: tiny_http::Request) -> Offer {
        let framing = Framing::of(&request);
        let mut lane = self.reader_wait(lock(&self.lane), |lane| {
            lane.waiting.is_some() && !lane.condemned
        });
        if lane.condemned {
            return Offer::Refused(request);
        }
        if self.secure {
            lane.unwritten += 1;
        }
        let written = Written(Arc::clone(self));
        let next = Waiting {
            request,
            framing,
            written,
        };
        if lane.busy {
            let settle = lane.undecided;
            lane.waiting = Some(next);
            return Offer::Queued { settle };
        }
        lane.busy = true;
        lane.undecided = framing.has_body();
        Offer::Serve(Exchange {
            next,
            conn: Arc::clone(self),
        })
    }

    /// The request waiting in the lane, or `None` after closing the lane.
    /// If the connection is condemned, a waiting request is dropped
    /// unanswered (outside the lock: dropping may drain a body).
    fn next_in_lane(&self) -> Option<Waiting> {
        let mut lane = lock(&self.lane);
        let next = lane.waiting.take();
        if lane.reader_waits {
            // The lane has room, or is empty: the connection thread goes on.
            self.settled.notify_all();
        }
        match next {
            Some(next) if !lane.condemned => {
                lane.undecided = next.framing.has_body();
                Some(next)
            }
            next => {
                lane.busy = false;
                drop(lane);
                if let Some(Waiting {
                    request, written, ..
                }) = next
                {
                    discard(request);
                    drop(written);
                }
                None
            }
        }
    }

    /// The worker knows what serving the request means for the connection:
    /// a request read behind it need not wait for its response.
    fn decided(&self, outcome: Outcome) {
        let mut lane = lock(&self.lane);
        lane.condemned |= outcome == Outcome::Condemn;
        lane.undecided = false;
        if lane.reader_waits {
            self.settled.notify_all();
        }
    }

    fn condemn_if(&self, outcome: Outcome) {
        if outcome == Outcome::Condemn {
            lock(&self.lane).condemned = true;
        }
    }

    /// Waits, if `queued` says so, until no request in the lane may yet
    /// condemn the connection, and over TLS until every response is
    /// written. `false` if the connection is condemned.
    fn settle(&self, queued: bool) -> bool {
        let lane = self.reader_wait(lock(&self.lane), |lane| {
            (queued && lane.busy && lane.undecided) || lane.unwritten > 0
        });
        !lane.condemned
    }

    /// The connection thread waits on `settled` while `blocked` says so.
    fn reader_wait<'a>(
        &self,
        mut lane: MutexGuard<'a, Lane>,
        blocked: impl Fn(&Lane) -> bool,
    ) -> MutexGuard<'a, Lane> {
        while blocked(&lane) {
            lane.reader_waits = true;
            lane = self
                .settled
                .wait(lane)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        lane.reader_waits = false;
        lane
    }
}

/// Takes a lock on bookkeeping. The queues and flags guarded this way hold
/// no invariant a panic could break halfway (each change is one push, pop
/// or assignment), so a poisoned lock is taken back. `server.rs` uses it
/// too.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| {
        mutex.clear_poison();
        poisoned.into_inner()
    })
}

/// What every exchange needs to know from the configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
    /// `--read-timeout`: also the most a whole request body may take.
    pub read_timeout: Duration,
    /// The CORS headers to add to every reply.
    pub cors: Cors,
}

impl Connections {
    pub fn new(handler: Arc<Handler>, settings: Settings) -> Connections {
        Connections {
            handler,
            settings: Arc::new(settings),
            delays: Arc::default(),
            stopping: Arc::default(),
        }
    }

    /// The server is stopping: requests read from now on are answered with
    /// `Connection: close` and no delay, responses held back are sent now,
    /// and each connection thread reads no further request.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.delays.stop();
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// A connection thread's loop: reads requests from `client` (a
    /// tiny_http connection) and offers each for serving with `submit`,
    /// which gives the exchange back once the server has finished. `slot`
    /// is the connection's place in the server's capacity: it is marked
    /// while the thread waits in tiny_http for a request, and freed once
    /// the connection's last response is written. Returns when the
    /// connection ends or is condemned, or once the server is stopping;
    /// dropping `client` then closes it.
    pub fn read<E: std::fmt::Display>(
        &self,
        mut client: impl Iterator<Item = Result<tiny_http::Request, E>>,
        secure: bool,
        slot: Slot,
        submit: impl Fn(Exchange) -> Option<Exchange>,
    ) {
        let conn = Arc::new(Conn {
            lane: Mutex::default(),
            settled: Condvar::new(),
            secure,
            slot,
        });
        while !self.stopping() {
            conn.slot.reading();
            let next = client.next();
            conn.slot.done_reading();
            let Some(next) = next else {
                return;
            };
            let request = match next {
                Ok(request) => request,
                // tiny_http answered it (400, 408, 417) and reads no more.
                Err(err) => {
                    log::debug!("connection ended: {err}");
                    continue;
                }
            };
            let settle = match conn.offer(request) {
                Offer::Serve(exchange) => match submit(exchange) {
                    None => false,
                    Some(refused) => {
                        discard(refused.next.request);
                        return;
                    }
                },
                Offer::Queued { settle } => settle,
                Offer::Refused(request) => {
                    discard(request);
                    return;
                }
            };
            if (settle || secure) && !conn.settle(settle) {
                return;
            }
        }
    }

    /// A worker serves `exchange`, then every request waiting behind it on
    /// its connection.
    pub fn serve(&self, exchange: Exchange) {
        let Exchange { next, conn } = exchange;
        let mut next = Some(next);
        while let Some(waiting) = next.take() {
            self.serve_one(waiting, &conn);
            next = conn.next_in_lane();
        }
    }

    fn serve_one(&self, next: Waiting, conn: &Arc<Conn>) {
        let Waiting {
            request,
            framing,
            written,
        } = next;
        if !framing.arrives_slowly() {
            conn.condemn_if(serve(request, framing, written, self, conn));
            return;
        }
        // A body still on its way could hold this worker for up to the read
        // timeout; a few slow uploads would hold them all. It gets a thread
        // of its own instead (its connection already has one).
        let (connections, conn) = (self.clone(), Arc::clone(conn));
        let spawned = std::thread::Builder::new()
            .name("upload".into())
            .spawn(move || conn.condemn_if(serve(request, framing, written, &connections, &conn)));
        if let Err(err) = spawned {
            log::warn!("cannot start a thread for a request body: {err}");
        }
    }
}

/// What a request's headers say about its body, looked up once: each
/// lookup is a scan of the headers.
#[derive(Debug, Clone, Copy)]
struct Framing {
    /// A `Content-Length` header is present.
    length_header: bool,
    /// A `Transfer-Encoding` header is present.
    chunked: bool,
    /// An `Expect` header is present (tiny_http only admits `100-continue`).
    expect: bool,
    /// `Connection: upgrade`: tiny_http then hands over the raw connection
    /// as the body, whatever its length, and reads none of it itself.
    upgrade: bool,
    /// The `Content-Length`, as tiny_http parsed it.
    length: Option<u64>,
    /// The `Connection` header to answer with (see [`connection_header`]).
    connection: Option<&'static str>,
}

impl Framing {
    fn of(request: &tiny_http::Request) -> Framing {
        let headers = request.headers();
        let asked = headers.get("Connection").map(|v| v.as_str());
        let upgrade = asked.is_some_and(|v| has_token(v, "upgrade"));
        Framing {
            length_header: headers.contains("Content-Length"),
            chunked: headers.contains("Transfer-Encoding"),
            expect: headers.contains("Expect"),
            upgrade,
            length: request.body_length().map(|n| n as u64),
            // tiny_http reads nothing after a request that offers an
            // upgrade: the connection closes after this response.
            connection: if upgrade {
                Some("close")
            } else {
                connection_header(asked, request.http_version())
            },
        }
    }

    /// Whether the request has a body, or headers that frame one. Only such
    /// a request can condemn its connection by what it sends (ambiguous
    /// framing, a stalled body, a body refused unread); any other only by
    /// a failed write.
    fn has_body(self) -> bool {
        self.length_header || self.chunked
    }

    /// Whether reading the body means waiting on the client. tiny_http
    /// reads a body of up to 1024 bytes before it queues the request,
    /// unless the client waits for `100 Continue` or upgrades the
    /// connection; anything else comes off the socket as we read.
    fn arrives_slowly(self) -> bool {
        self.chunked || self.expect || self.upgrade || self.length.is_some_and(|n| n > 1024)
    }
}

/// Drops a request without answering it. Taking the writer first keeps
/// tiny_http from answering 500 on our behalf; dropping the request lets
/// its connection thread go on to the next one.
fn discard(request: tiny_http::Request) {
    drop(request.into_writer());
}

/// What an exchange means for its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Serve the connection's next request as usual.
    Continue,
    /// Serve nothing more on this connection.
    Condemn,
}

/// The body of a tiny_http request as a plain reader, with two duties.
/// Asking tiny_http for the reader sends `100 Continue` when the client
/// expects it, so we ask only on the first read: a request refused before
/// its body is read (413 from `Content-Length`, 415) never invites the
/// body. And the whole body must arrive before `deadline`: each socket read
/// has the read timeout, but a client trickling a byte at a time would
/// otherwise hold a worker for ever.
struct LazyBody<'a> {
    request: &'a mut tiny_http::Request,
    deadline: Instant,
    /// Whether a read has reached the end of the body.
    finished: bool,
    /// The bytes of the body still to come, when tiny_http's reader does
    /// not stop at the body's end by itself: for a request that offers an
    /// upgrade it is the raw connection (RFC 9112 section 6.3 still frames
    /// the body by its `Content-Length`, or none at all).
    left: Option<u64>,
}

impl Read for LazyBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() > self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the body took longer than the read timeout",
            ));
        }
        let n = match self.left {
            Some(0) => 0,
            Some(left) => {
                let room = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let n = self.request.as_reader().read(&mut buf[..room])?;
                self.left = Some(left - n as u64);
                n
            }
            None => self.request.as_reader().read(buf)?,
        };
        if n == 0 && !buf.is_empty() {
            self.finished = true;
        }
        Ok(n)
    }
}

/// The parts of a request its handler reads: borrowed from the request, or
/// copied ([`Heads::into_owned`]) when the request is lent to its body
/// reader.
struct Heads<'a> {
    method: Method,
    method_name: Cow<'a, str>,
    target: Cow<'a, str>,
    content_type: Option<Cow<'a, str>>,
    accept: Option<Cow<'a, str>>,
    preflight: bool,
    authorization: Option<Cow<'a, str>>,
    if_none_match: Option<Cow<'a, str>>,
    if_match: Option<Cow<'a, str>>,
    content_length: Option<u64>,
}

impl<'a> Heads<'a> {
    /// Looks up only the headers `method` can use: each lookup is a scan.
    /// `preflight` and `content_length` are already known.
    fn of(
        request: &'a tiny_http::Request,
        method: Method,
        preflight: bool,
        content_length: Option<u64>,
    ) -> Heads<'a> {
        let header = |name| {
            request
                .headers()
                .get(name)
                .map(|v| Cow::Borrowed(v.as_str()))
        };
        let takes_body = matches!(method, Method::Post | Method::Put | Method::Patch);
        let reads = matches!(method, Method::Get | Method::Head);
        let changes = matches!(method, Method::Put | Method::Patch | Method::Delete);
        Heads {
            method,
            method_name: Cow::Borrowed(request.method().as_str()),
            target: Cow::Borrowed(request.url()),
            content_type: takes_body.then(|| header("Content-Type")).flatten(),
            accept: header("Accept"),
            preflight,
            authorization: header("Authorization"),
            if_none_match: reads.then(|| header("If-None-Match")).flatten(),
            if_match: changes.then(|| header("If-Match")).flatten(),
            content_length,
        }
    }

    fn into_owned(self) -> Heads<'static> {
        let own = |value: Option<Cow<'_, str>>| value.map(|v| Cow::Owned(v.into_owned()));
        Heads {
            method: self.method,
            method_name: Cow::Owned(self.method_name.into_owned()),
            target: Cow::Owned(self.target.into_owned()),
            content_type: own(self.content_type),
            accept: own(self.accept),
            preflight: self.preflight,
            authorization: own(self.authorization),
            if_none_match: own(self.if_none_match),
            if_match: own(self.if_match),
            content_length: self.content_length,
        }
    }

    fn request<'b>(&'b self, body: Body<'b>, max_body_bytes: usize) -> Request<'b> {
        Request {
            method: self.method,
            method_name: &self.method_name,
            target: &self.target,
            content_type: self.content_type.as_deref(),
            accept: self.accept.as_deref(),
            preflight: self.preflight,
            authorization: self.authorization.as_deref(),
            if_none_match: self.if_none_match.as_deref(),
            if_match: self.if_match.as_deref(),
            content_length: self.content_length,
            body,
            max_body_bytes,
        }
    }
}

/// A CORS preflight: `OPTIONS` with `Access-Control-Request-Method`.
fn is_preflight(request: &tiny_http::Request, method: Method) -> bool {
    method == Method::Options && request.headers().contains("Access-Control-Request-Method")
}

/// Whether a header present at least once occurs again. tiny_http's
/// `Headers` finds only the first match and cannot be iterated, so we look
/// on a copy, renaming the first match before looking again.
fn repeated(request: &tiny_http::Request, name: &str) -> bool {
    static RENAMED: OnceLock<Option<tiny_http::HeaderField>> = OnceLock::new();
    let Some(renamed) = RENAMED.get_or_init(|| "X-Counted".parse().ok()) else {
        return false;
    };
    let mut headers = request.headers().clone();
    if let Some(first) = headers.get_header_mut(name) {
        first.field = renamed.clone();
    }
    headers.contains(name)
}

thread_local! {
    /// A worker's buffer for the bodies it takes from memory (1 KiB at most).
    static BODY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serves one request from start to finish: see the module comment.
/// `written` goes wherever the request goes, and is dropped once the
/// response is written.
fn serve(
    mut request: tiny_http::Request,
    framing: Framing,
    written: Written,
    connections: &Connections,
    conn: &Conn,
) -> Outcome {
    let (handler, settings) = (&*connections.handler, &*connections.settings);
    let Settings {
        max_body_bytes,
        read_timeout,
        ..
    } = *settings;
    let method = Method::parse(request.method().as_str());
    let method_name: Cow<'static, str> = match method.name() {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(request.method().as_str().to_string()),
    };
    // For the access-log line, written once the request is gone: the target
    // and when the request started. Reading the clock costs a little on
    // every request, so it is read only for the log, a body that arrives
    // slowly (its deadline), or a delayed response (from the handler's
    // end: the difference is the handler's few microseconds).
    let logged = access_log::enabled().then(|| (request.url().to_string(), Instant::now()));
    let preflight = is_preflight(&request, method);
    // A stopping server closes each connection after the request in hand.
    let stopping = connections.stopping();
    let connection = if stopping {
        Some("close")
    } else {
        framing.connection
    };
    let content_length = framing.length;
    // Whether nothing of the body is left unread on the connection.
    let mut body_finished = !framing.chunked && content_length.unwrap_or(0) == 0;
    let ambiguous = framing_error(&request, framing);
    let mut outcome = if ambiguous.is_some() {
        Outcome::Condemn
    } else {
        Outcome::Continue
    };
    let exchange = |req: &mut Request<'_>| {
        catch_unwind(AssertUnwindSafe(|| handler(req))).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            log::error!("handler panicked on {method_name} {}: {what}", req.target);
            Reply::from(ApiError::Internal)
        })
    };

    let reply = match ambiguous {
        Some(err) => Reply::from(err),
        None if framing.arrives_slowly() => {
            // The body reader borrows the request, so the handler gets
            // copies of its headers.
            let heads = Heads::of(&request, method, preflight, content_length).into_owned();
            let mut body = LazyBody {
                request: &mut request,
                deadline: Instant::now() + read_timeout,
                finished: body_finished,
                left: framing.upgrade.then_some(content_length.unwrap_or(0)),
            };
            let reply = exchange(&mut heads.request(Body::Reader(&mut body), max_body_bytes));
            body_finished = body.finished;
            reply
        }
        None => {
            // Any body is at most 1 KiB, and tiny_http read it with the
            // head: taking it now from memory lends the handler the
            // request's own headers. One over `--max-body-bytes` is left
            // unread, for the handler's 413.
            let length = content_length.filter(|&n| n > 0 && n <= max_body_bytes as u64);
            BODY.with_borrow_mut(|bytes| {
                bytes.clear();
                let read = match length {
                    Some(n) => request.as_reader().take(n).read_to_end(bytes),
                    None => Ok(0),
                };
                match read {
                    Ok(_) => {
                        body_finished |= length.is_some();
                        let heads = Heads::of(&request, method, preflight, content_length);
                        exchange(&mut heads.request(Body::Buffered(bytes), max_body_bytes))
                    }
                    Err(err) => {
                        outcome = Outcome::Condemn;
                        Reply::from(ApiError::bad_request(format!(
                            "cannot read the request body: {err}"
                        )))
                    }
                }
            })
        }
    };
    if reply.status == 408 {
        // The client stopped sending its body; whatever it sends next is
        // the rest of that body, not a request.
        outcome = Outcome::Condemn;
    }
    let mut reply = reply;
    if stopping {
        // Held back no longer: the server has only its grace period left.
        reply.delay = Duration::ZERO;
    }
    let asked = |name| request.headers().get(name).map(|v| v.as_str());
    settings.cors.apply(
        &mut reply,
        Asked {
            origin: matches!(settings.cors, Cors::Origins(_))
                .then(|| asked("Origin"))
                .flatten(),
            method: preflight
                .then(|| asked("Access-Control-Request-Method"))
                .flatten(),
            headers: preflight
                .then(|| asked("Access-Control-Request-Headers"))
                .flatten(),
        },
    );

    if !body_finished && framing.arrives_slowly() {
        // Refused before its body was read. A small body is already in
        // tiny_http's buffer; the rest of a larger one it discards after
        // our answer, but only up to the read timeout, and what the client
        // sends after a body that stalled could be taken for a request: that
        // connection serves nothing more.
        outcome = Outcome::Condemn;
    }
    // Known before the response is written (only a failed write changes
    // it), so a request already read from the connection need not wait.
    conn.decided(outcome);
    // A server that began stopping while this request was served closes the
    // connection after it too.
    let connection = match outcome {
        Outcome::Condemn => Some("close"),
        Outcome::Continue if connections.stopping() => Some("close"),
        Outcome::Continue => connection,
    };

    let date = http_date();
    let remote = request.remote_addr().copied();
    let status = reply.status;
    let sent = if body_finished && reply.delay.is_zero() {
        write_reply(request, &reply, &date, method == Method::Head, connection)
    } else if body_finished {
        // Sent later by the delay thread; this worker moves on.
        let length = reply
            .encode(&date, method == Method::Head, connection)
            .len();
        let started = logged
            .as_ref()
            .map_or_else(Instant::now, |(_, started)| *started);
        connections.delays.send_at(
            started + reply.delay,
            request,
            reply,
            method == Method::Head,
            connection,
            written,
        );
        Ok(length)
    } else {
        // Hand the request to a thread of its own: see `respond_before_drain`.
        let bytes = reply.body_bytes().len();
        let spawned = std::thread::Builder::new()
            .name("drain".into())
            .spawn(move || {
                std::thread::sleep(reply.delay);
                if let Err(err) = respond_before_drain(request, &reply, &date) {
                    log::debug!("cannot send the response: {err}");
                }
                drop(written);
            });
        spawned.map(|_| bytes)
    };
    let remote = Remote(remote);
    match (sent, logged) {
        (Ok(bytes), Some((target, started))) => access_log::record(access_log::Line {
            remote: remote.0,
            method: &method_name,
            target: &target,
            status,
            bytes,
            elapsed: started.elapsed(),
        }),
        (Ok(_), None) => {}
        (Err(err), _) => {
            log::debug!("cannot send the response to {remote}: {err}");
            outcome = Outcome::Condemn;
        }
    }
    outcome
}

/// A peer address for the log, formatted only if a line is written.
struct Remote(Option<SocketAddr>);

impl std::fmt::Display for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(addr) => write!(f, "{addr}"),
            None => f.write_str("-"),
        }
    }
}

/// The `Date` header's value. Formatting a date costs more than the rest of
/// a small response's head, and it changes once a second, so each thread
/// keeps the last one it made.
pub(crate) fn http_date() -> Arc<str> {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<(u64, Arc<str>)> = RefCell::new((u64::MAX, Arc::from("")));
    }
    let now = SystemTime::now();
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    LAST.with_borrow_mut(|(last, date)| {
        if *last != second {
            *last = second;
            *date = Arc::from(httpdate::fmt_http_date(now));
        }
        Arc::clone(date)
    })
}

/// The usual way out: our own encoding, written in one go. Returns the
/// number of bytes sent. A write that fails or blocks past the write
/// timeout is an error, and the caller condemns the connection.
fn write_reply(
    request: tiny_http::Request,
    reply: &Reply,
    date: &str,
    head_only: bool,
    connection: Option<&str>,
) -> io::Result<usize> {
    use std::cell::RefCell;
    // Each worker encodes into the same buffer every time, rather than
    // allocating one per response; one that grew past this is let go.
    const KEPT: usize = 64 * 1024;
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|bytes| {
        bytes.clear();
        reply.encode_into(bytes, date, head_only, connection);
        // `into_writer` drops the request, and with it the body reader,
        // which reads whatever is left of the body; here nothing is left.
        let mut writer = request.into_writer();
        let sent = writer
            .write_all(bytes)
            .and_then(|()| writer.flush())
            .map(|()| bytes.len());
        if bytes.capacity() > KEPT {
            *bytes = Vec::new();
        }
        sent
    })
}

/// The way out when the body was not read to its end (a request refused
/// early). tiny_http reads and discards the rest of a body before the next
/// request, when the request is dropped; `into_writer` drops it before we
/// write, so a client waiting for `100 Continue`, or for our answer, would
/// wait for ever. `respond` writes first, then drops. The drop may read a
/// large body to its end, so this runs on its own thread, never a worker's.
/// The price is tiny_http's encoding of the head: its reason phrases and
/// framing, and a `Content-Length: 0` even on a 204.
fn respond_before_drain(request: tiny_http::Request, reply: &Reply, date: &str) -> io::Result<()> {
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
    request.respond(response)
}

/// Framing we can see and tiny_http would guess at (RFC 9112 section 6.3):
/// more than one `Content-Length` or `Transfer-Encoding`, or a
/// `Content-Length` that is not plain digits. (Both headers together,
/// tiny_http refuses itself.)
fn framing_error(request: &tiny_http::Request, framing: Framing) -> Option<ApiError> {
    let ambiguous = |why: String| {
        Some(ApiError::BadRequest {
            detail: format!("ambiguous message framing: {why}"),
            hint: None,
        })
    };
    for (name, present) in [
        ("Content-Length", framing.length_header),
        ("Transfer-Encoding", framing.chunked),
    ] {
        if present && repeated(request, name) {
            return ambiguous(format!("more than one {name} header"));
        }
    }
    if framing.upgrade && framing.chunked {
        // tiny_http hands over the raw connection as the body of a request
        // that offers an upgrade, chunk sizes and all: we could not tell
        // where the body ends.
        return Some(ApiError::BadRequest {
            detail: "a chunked body with Connection: upgrade is not supported".into(),
            hint: Some("send the body with a Content-Length, or without the upgrade offer"),
        });
    }
    if !framing.length_header {
        return None;
    }
    match request.headers().get("Content-Length").map(|v| v.as_str()) {
        Some(value) if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) => {
            ambiguous(format!("Content-Length '{value}' is not a number"))
        }
        // Digits that tiny_http could not parse: more than 64 bits. It then
        // reads no body at all, and would take the body for the next request.
        Some(value) if framing.length.is_none() => {
            ambiguous(format!("Content-Length '{value}' is too large"))
        }
        _ => None,
    }
}

/// The `Connection` header to send, mirroring what tiny_http decides for
/// the connection: close after this response when the client asked to, or
/// when it speaks HTTP/1.0 without asking for keep-alive.
fn connection_header(
    asked: Option<&str>,
    version: &tiny_http::HTTPVersion,
) -> Option<&'static str> {
    let http10 = *version == tiny_http::HTTPVersion(1, 0);
    match asked {
        Some(v) if has_token(v, "close") => Some("close"),
        Some(v) if http10 && has_token(v, "keep-alive") => Some("keep-alive"),
        _ if http10 => Some("close"),
        _ => None,
    }
}

/// Whether a header value mentions `token`, in any case (as tiny_http
/// matches them).
fn has_token(value: &str, token: &str) -> bool {
    value
        .as_bytes()
        .windows(token.len())
        .any(|w| w.eq_ignore_ascii_case(token.as_bytes()))
}
