//! The transport: connections and bytes. The only code that names
//! tiny_http, the HTTP library: it parses each request's head and frames
//! its body; everything around it is ours.
//!
//! Its public face is small: [`bind`] a listening socket, [`Server::start`]
//! serving it with a [`Handler`], [`Stopper::stop`], and [`Server::wait`].
//!
//! # The normal path
//!
//! 1. One thread accepts connections (`accept.rs`) and gives each a thread
//!    of its own.
//! 2. That thread reads the connection's requests, one after the other
//!    (tiny_http parses them), and queues each for the workers
//!    (`workers.rs`), one at a time per connection (`connection.rs`).
//! 3. A worker turns the request into an [`http::Request`](crate::http::Request),
//!    calls the handler, tags the [`Response`] with the request's id
//!    (`X-Request-Id`), and writes it back: `serve`, below.
//!
//! # Around tiny_http's defects
//!
//! Each has its own file, whose comment names the defect and the test that
//! proves the workaround:
//! - `accept.rs`: tiny_http's accept loop ends for good on its first error,
//!   and its thread pool can leave a new connection unread behind another;
//!   we accept and keep the threads ourselves.
//! - `capacity.rs`: a request line with `HTTP/2.0` deadlocks a connection's
//!   thread, and a request head has no deadline; neither can be freed. The
//!   connections are capped, and stuck ones make the server give up.
//! - `body.rs`: framing tiny_http cannot check, a body's deadline, bodies
//!   on upgrade offers, `100 Continue` only when the body is read.
//! - `library.rs`: headers that cannot be iterated, and an unread body
//!   discarded before the response is written.
//! - `connection.rs`: over TLS, reading and writing share one lock; and
//!   a connection closed without a response (`Response::unanswered`, for
//!   `_fault=close`) stays open while its thread waits in tiny_http for
//!   the next request, so with [`Settings::may_leave_unanswered`] the
//!   thread waits for each request's verdict before it reads again.
//!
//! **Timeouts.** tiny_http does not hand out its sockets, so [`bind`] sets
//! `SO_RCVTIMEO` and `SO_SNDTIMEO` on the listening socket: Linux copies
//! both to every accepted connection.
//!
//! **Shutdown.** [`Stopper::stop`] stops accepting. Requests in flight get
//! up to [`GRACE`]: a body still arriving is read and answered, responses
//! held back by a delay are sent at once, and each says
//! `Connection: close`. [`Server::wait`] returns once every connection is
//! done, or when the grace period is over.

mod accept;
pub mod access_log;
mod body;
pub mod capacity;
mod connection;
mod delay;
mod library;
#[cfg(test)]
mod tests;
mod workers;

use std::borrow::Cow;
use std::cell::RefCell;
use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use socket2::{Domain, Protocol, Socket, Type};

use crate::error::ApiError;
use crate::health::Health;
use crate::http::Response;
use crate::http::{Method, Request};
use body::BodyReader;
use connection::Connection;
use library::Incoming;
use workers::Workers;

pub use accept::{Failed, GIVE_UP_AFTER, STUCK_FOR, STUCK_MARGIN, deaf_limit};

/// How long requests in flight get to finish once the server is stopping.
pub const GRACE: Duration = Duration::from_secs(5);

/// What answers requests: the application in production, anything in
/// tests (a closure is a handler).
pub trait Handler: Send + Sync + 'static {
    /// The response to `request`.
    fn handle(&self, request: &mut Request<'_>) -> Response;

    /// The response when the transport refuses `request` itself, instead
    /// of [`Handler::handle`]: ambiguous framing (400), or `handle`
    /// panicked (500). The application adds what every response carries.
    fn refuse(&self, _request: &Request<'_>, error: ApiError) -> Response {
        Response::from(error)
    }
}

impl<F: Fn(&mut Request<'_>) -> Response + Send + Sync + 'static> Handler for F {
    fn handle(&self, request: &mut Request<'_>) -> Response {
        self(request)
    }
}

/// What the transport takes from the configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    pub threads: usize,
    pub max_body_bytes: usize,
    /// How long a connection may stay silent, and a whole body may take.
    pub read_timeout: Duration,
    /// How long one write may block.
    pub write_timeout: Duration,
    /// The connection cap; `None` for [`capacity::default_max`].
    pub max_connections: Option<usize>,
    /// PEM files of a certificate chain and its key: serve HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The handler may leave a request unanswered (`Response::unanswered`,
    /// with `--faults`): see `connection.rs`, "Closing".
    pub may_leave_unanswered: bool,
}

/// Creates the listening socket with the options every accepted
/// connection inherits: `TCP_NODELAY` (without it a response over about
/// 1 KiB waits ~40 ms for the client's delayed ACK), and the read and write
/// timeouts.
pub fn bind(host: &str, port: u16, settings: &Settings) -> io::Result<TcpListener> {
    let addr = (host, port).to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            format!("'{host}' resolves to no address"),
        )
    })?;
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Lets a restarted server bind while old connections sit in TIME_WAIT;
    // on Linux it does not let two servers share a port.
    socket.set_reuse_address(true)?;
    socket.set_tcp_nodelay(true)?;
    socket.set_read_timeout(Some(settings.read_timeout))?;
    socket.set_write_timeout(Some(settings.write_timeout))?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    accepting: Arc<accept::Accepting>,
    workers: Vec<std::thread::JoinHandle<()>>,
    acceptor: std::thread::JoinHandle<()>,
}

/// Stops the server from any thread (a signal handler's, a test's).
#[derive(Clone)]
pub struct Stopper(Arc<accept::Accepting>);

impl Stopper {
    /// Stops accepting connections, and lets the requests in flight finish.
    pub fn stop(&self) {
        self.0.stop();
    }
}

impl Server {
    /// Serves `listener` (from [`bind`]) with `handler`, reporting trouble
    /// with the connections in `health`.
    pub fn start(
        listener: TcpListener,
        settings: &Settings,
        handler: Arc<dyn Handler>,
        health: Arc<Health>,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let workers = Arc::new(Workers::new(
            handler,
            settings.max_body_bytes,
            settings.read_timeout,
        ));
        let (accepting, acceptor) =
            accept::start(listener, settings, Arc::clone(&workers), health)?;
        let workers = (0..settings.threads)
            .map(|n| {
                let workers = Arc::clone(&workers);
                std::thread::Builder::new()
                    .name(format!("worker-{n}"))
                    .spawn(move || workers.work())
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Server {
            addr,
            accepting,
            workers,
            acceptor,
        })
    }

    /// The address actually bound (the real port when asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.accepting))
    }

    /// How many connections are open now.
    pub fn open_connections(&self) -> usize {
        self.accepting.capacity.open()
    }

    /// Waits until the server stops, then until the requests in flight are
    /// finished or [`GRACE`] is over. `Err` when the server stopped because
    /// it could not serve, not because it was asked to: it then returns at
    /// once, without waiting for what may never finish.
    pub fn wait(self) -> Result<(), Failed> {
        // The accept thread ends when the server stops.
        if self.acceptor.join().is_err() {
            log::error!("the accept thread panicked");
        }
        let failure = self.accepting.failure();
        let capacity = &self.accepting.capacity;
        let drained = failure.is_none() && capacity.wait_until_empty(Instant::now() + GRACE);
        if failure.is_none() && !drained {
            log::warn!(
                "{} connection(s) still open {GRACE:?} after the stop; closing them",
                capacity.open()
            );
        }
        self.accepting.workers.finish();
        if drained {
            for worker in self.workers {
                if worker.join().is_err() {
                    log::error!("a worker thread panicked outside a request");
                }
            }
        }
        match failure {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}

/// Serves one request from its head to its response on the wire: the
/// normal path. `request.in_flight` goes wherever the request goes, and is
/// dropped once the response is sent.
fn serve<R: Incoming>(workers: &Workers<R>, request: connection::Request<R>, conn: &Connection<R>) {
    let connection::Request {
        mut incoming,
        framing,
        in_flight,
    } = request;
    let started = Instant::now();
    let remote = incoming.remote_addr();
    // 1. The head as the handler sees it, and the body as it reads it.
    let method = Method::parse(incoming.method());
    let method_name: Cow<'_, str> = match method.name() {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(incoming.method().to_string()),
    };
    let target = incoming.target().to_string();
    let headers: Vec<_> = crate::http::READ_HEADERS
        .iter()
        .filter_map(|&name| Some((name, incoming.header(name)?.to_string())))
        .collect();
    let id = request_id(&headers);
    let refused = framing.error(&incoming);
    let mut body = BodyReader::new(&mut incoming, framing, started + workers.read_timeout);
    let mut request = Request {
        method,
        method_name: &method_name,
        id: &id,
        target: &target,
        headers,
        content_length: framing.length,
        body: &mut body,
        max_body_bytes: workers.max_body_bytes,
        body_read: None,
    };
    // 2. The handler, whose panic is a 500 and leaves the worker alive.
    let handler = &*workers.handler;
    let refusal = refused.is_some();
    let mut reply = match refused {
        Some(error) => handler.refuse(&request, error),
        None => catch_unwind(AssertUnwindSafe(|| handler.handle(&mut request))).unwrap_or_else(
            |panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("handler panicked on {method_name} {target}: {what}");
                handler.refuse(&request, ApiError::Internal)
            },
        ),
    };
    drop(request);
    // Every response this function writes, refusals and 500s included,
    // names its request (the access log keeps a copy only when it is on).
    let logged_id = access_log::enabled().then(|| id.clone());
    reply.identify(id);
    // 3. Whether the connection closes after this response: the rest of a
    //    body left unread may never come, what follows a body that stopped
    //    could be taken for a request, and an unanswered request ends it.
    let unread = !body.finished && framing.arrives_slowly();
    let stopping = workers.stopping();
    let close =
        refusal || unread || reply.status == 408 || stopping || framing.close || reply.unanswered;
    // Known before the response is written (only a failed write changes
    // it), so a request already read behind it need not wait.
    conn.decided(close && !framing.close);
    let connection = match (close, framing.keep_alive_10) {
        (true, _) => Some("close"),
        (false, true) => Some("keep-alive"),
        (false, false) => None,
    };
    if stopping {
        reply.delay = Duration::ZERO;
    }
    // 4. The response: none (unanswered), now, later (a delay), or before
    //    tiny_http discards an unread body (on a thread of its own: that
    //    may take a while).
    let date = http_date();
    let head_only = method == Method::Head;
    let status = reply.status;
    let sent = if reply.unanswered {
        // Nothing is written: the connection's thread, told by `decided`,
        // stops reading, and the socket closes once both let go of it.
        incoming.discard();
        Ok(0)
    } else if unread {
        let length = reply.body_bytes().len();
        let spawned = std::thread::Builder::new()
            .name("discard".into())
            .spawn(move || {
                std::thread::sleep(reply.delay);
                if let Err(err) = incoming.send_before_discarding_body(&reply, &date) {
                    log::debug!("cannot send the response: {err}");
                }
                drop(in_flight);
            });
        spawned.map(|_| length)
    } else if reply.delay.is_zero() {
        let bytes = reply.encode(&date, head_only, connection);
        incoming.send(&bytes).map(|()| bytes.len())
    } else {
        let length = reply.encode(&date, head_only, connection).len();
        let due = started + reply.delay;
        workers
            .delays
            .send_at(due, incoming, reply, head_only, connection, in_flight);
        Ok(length)
    };
    // 5. One access-log line.
    match sent {
        Ok(bytes) => {
            if let Some(id) = &logged_id {
                access_log::record(access_log::Line {
                    remote,
                    method: &method_name,
                    target: &target,
                    status,
                    bytes,
                    elapsed: started.elapsed(),
                    id,
                });
            }
        }
        Err(err) => {
            log::debug!("cannot send the response: {err}");
            conn.close();
        }
    }
}

/// The request's id, for its response's `X-Request-Id`, its access-log
/// line and its problem document's `instance`: the client's own when it is
/// sane ([`sane_request_id`]), else one made here. A client's id that is
/// not sane is replaced, never echoed: it could split the response's head
/// (CR LF) or forge a log line.
fn request_id(headers: &[(&'static str, String)]) -> String {
    let sent = headers.iter().find(|(name, _)| *name == "X-Request-Id");
    match sent {
        Some((_, id)) if sane_request_id(id) => id.clone(),
        _ => new_request_id(),
    }
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

/// A new id: this process's prefix, a dash, and a counter (`3f9a0c12e4b7-1`,
/// `3f9a0c12e4b7-2`, ...). The prefix mixes the start time, the process id
/// and std's per-process random hash keys into 48 bits, so two runs of the
/// server, even two started in the same nanosecond, make different ids in
/// practice; the counter makes every id in a run different. No system call
/// per request: the prefix is made once.
fn new_request_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
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
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut id = String::with_capacity(32);
    for part in [prefix.as_str(), "-", itoa::Buffer::new().format(n)] {
        id.push_str(part);
    }
    id
}

/// The `Date` field's value (RFC 9110 section 6.6.1). It changes once a
/// second, so each thread keeps the last one it formatted (the README's
/// "Performance" says what that saves).
pub(crate) fn http_date() -> Arc<str> {
    thread_local! {
        static LAST: RefCell<(u64, Arc<str>)> = RefCell::new((u64::MAX, Arc::from("")));
    }
    let now = SystemTime::now();
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    LAST.with_borrow_mut(|(last, date)| {
        if *last != second {
            *last = second;
            *date = Arc::from(httpdate::fmt_http_date(now));
        }
        Arc::clone(date)
    })
}

/// Takes a lock on the transport's bookkeeping. The queues and flags
/// guarded this way hold no invariant a panic could break halfway (each
/// change is one push, pop or assignment), so a poisoned lock is taken
/// back.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| {
        mutex.clear_poison();
        poisoned.into_inner()
    })
}
