//! The listening socket, the accept loop, the connection threads and the
//! workers. With `connection.rs`, the only modules that touch sockets.
//!
//! tiny_http parses requests and writes responses; the threads are ours.
//! One accept thread takes each new connection from
//! `tiny_http::Server::accept_connection` and gives it to a connection
//! thread from [`Pool`], which reads the connection's requests and offers
//! each to the shared queue (`connection.rs` decides whether it goes there
//! or waits behind its connection's request in progress). `--threads`
//! workers take requests off the queue and serve them.
//!
//! Why not tiny_http's own accept loop and thread pool: its accept loop
//! ends for good on the first accept error (descriptors exhausted, or the
//! read timeout below), leaving the server alive but deaf; and its pool
//! decides whether to start a thread for a new connection from a stale
//! count of idle threads, so in a burst a connection can wait for another
//! keep-alive connection to close before it is read at all.
//!
//! **Timeouts.** tiny_http does not hand out its sockets, so we set
//! `SO_RCVTIMEO` and `SO_SNDTIMEO` on the listening socket: Linux copies
//! both to every accepted connection, which gives each a read and a write
//! timeout. Linux applies `SO_RCVTIMEO` to `accept()` too; the accept loop
//! simply accepts again.
//!
//! **Accept errors.** A failed accept (descriptors or memory exhausted;
//! tiny_http panics when it cannot duplicate the new socket) is retried after a pause that grows to a second; the connection waits in
//! the backlog meanwhile. If accepting has failed without a break for
//! [`GIVE_UP_AFTER`], the server stops, and `main` exits non-zero for a
//! supervisor to restart it.
//!
//! **Capacity** (`capacity.rs`). At most `--max-connections` connections
//! are open at once; while the cap is reached the accept loop waits, and new
//! connections wait in the kernel's listen queue. A watchdog thread checks
//! twice a second for connections stuck inside tiny_http reading a request
//! head (see `capacity.rs`): while they hold half the capacity or more,
//! `/healthz` answers 503 and the log says why; if that lasts
//! [`STUCK_FOR`] (or the read timeout, if shorter), the server stops with
//! the reason, and `main` exits non-zero for a supervisor to restart it:
//! never alive but unable to take a connection for more than
//! [`deaf_limit`].
//!
//! **Shutdown.** [`Stopper::stop`] shuts the listening socket down, which
//! ends the accept loop. Requests in flight are finished for up to
//! [`GRACE`]: a body still arriving is read and answered, held-back
//! responses are sent at once, and a request read meanwhile is answered
//! with `Connection: close`. [`Server::wait`] returns once every connection
//! is done, or when the grace period is over.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::capacity::Capacity;
use crate::config::Config;
pub use crate::connection::Handler;
use crate::connection::{Connections, Exchange, Settings, lock};
use crate::health::Health;

/// How long accepting may keep failing before the server gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(60);

/// How long requests in flight get to finish once the server is stopping.
pub const GRACE: Duration = Duration::from_secs(5);

/// How much longer than the read timeout (which bounds an idle wait for the
/// next request) a connection may spend reading one request head before
/// it counts as stuck: this, or the read timeout if that is shorter.
pub const STUCK_MARGIN: Duration = Duration::from_secs(10);

/// How long stuck connections may hold half the capacity or more before
/// the server gives up: this, or the read timeout if that is shorter.
pub const STUCK_FOR: Duration = Duration::from_secs(10);

/// How often the watchdog counts stuck connections.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// The longest a server can be unable to take a connection, its capacity
/// held by stuck connections, before it stops: each becomes stuck at
/// most `stuck_after` after its head began, and the server gives up
/// `stuck_for` later; each is seen at the watchdog's next look, and two
/// seconds cover those and a busy machine's scheduling.
pub fn deaf_limit(read_timeout: Duration) -> Duration {
    read_timeout
        + read_timeout.min(STUCK_MARGIN)
        + read_timeout.min(STUCK_FOR)
        + Duration::from_secs(2)
}

/// How long a connection thread waits for a new connection before it
/// exits. An idle server keeps none.
pub const CONNECTION_THREAD_IDLE: Duration = Duration::from_secs(5);

/// Creates the listening socket with the options every accepted
/// connection inherits:
/// - `TCP_NODELAY`: without it a response over about 1 KiB waits ~40 ms
///   for the client's delayed ACK (Nagle's algorithm);
/// - `SO_RCVTIMEO`, `SO_SNDTIMEO`: the read and write timeouts.
pub fn bind(config: &Config) -> io::Result<TcpListener> {
    let (host, port) = (config.host.as_str(), config.port);
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
    socket.set_read_timeout(Some(config.read_timeout))?;
    socket.set_write_timeout(Some(config.write_timeout))?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    acceptor: JoinHandle<()>,
}

/// What the accept thread, connection threads, workers and the stopper
/// share.
struct Shared {
    /// Our handle on the listening socket, for `stop` to shut it down.
    listener: Socket,
    connections: Connections,
    /// Requests ready for a worker.
    queue: Mutex<Queue>,
    /// Signalled when a request is queued while a worker waits, and when
    /// stopping.
    queued: Condvar,
    pool: Arc<Pool>,
    /// The open connections, at most `--max-connections`.
    capacity: Arc<Capacity>,
    /// What `/healthz` reports about the connections.
    health: Arc<Health>,
    /// How long a connection may read one request head before it is stuck.
    stuck_after: Duration,
    /// How long stuck connections may hold half the capacity.
    stuck_for: Duration,
    stopping: AtomicBool,
    /// Set once the grace period is over: the workers exit when idle.
    finished: AtomicBool,
    /// Why the server stopped, when it was not asked to.
    failure: Mutex<Option<String>>,
}

/// Stops the server from any thread (a signal handler thread, a test).
#[derive(Clone)]
pub struct Stopper(Arc<Shared>);

impl Stopper {
    /// Stops accepting connections and lets every worker finish and exit.
    pub fn stop(&self) {
        self.0.stop();
    }
}

/// Why a server stopped other than by [`Stopper::stop`]: it could not
/// serve, and a restart is the way out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed(pub String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}

impl Server {
    /// Starts serving `listener` (from [`bind`]) with `config.threads`
    /// workers, reporting trouble with the connections in `health`.
    pub fn start(
        listener: TcpListener,
        config: &Config,
        handler: Arc<Handler>,
        health: Arc<Health>,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let tls = match &config.tls {
            Some((cert, key)) => Some(load_tls(cert, key)?),
            None => None,
        };
        // tiny_http panics on a key it cannot parse rather than failing.
        let tls =
            std::panic::catch_unwind(|| tiny_http::SslContextWrap::build_ssl_capabilities(tls))
                .map_err(|_| io::Error::other("TLS: the private key cannot be read"))?
                .map_err(|err| io::Error::other(format!("TLS: {err}")))?;
        let accepting = tiny_http::Listener::from(listener.try_clone()?);
        let shared = Arc::new(Shared {
            listener: Socket::from(listener),
            connections: Connections::new(
                handler,
                Settings {
                    max_body_bytes: config.max_body_bytes,
                    read_timeout: config.read_timeout,
                    cors: config.cors.clone(),
                },
            ),
            queue: Mutex::default(),
            queued: Condvar::new(),
            pool: Arc::new(Pool::default()),
            capacity: Arc::new(Capacity::new(config.max_connections())),
            health,
            stuck_after: config.read_timeout + config.read_timeout.min(STUCK_MARGIN),
            stuck_for: config.read_timeout.min(STUCK_FOR),
            stopping: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            failure: Mutex::new(None),
        });
        let workers = (0..config.threads)
            .map(|n| {
                let shared = Arc::clone(&shared);
                thread::Builder::new()
                    .name(format!("worker-{n}"))
                    .spawn(move || shared.work())
            })
            .collect::<io::Result<Vec<_>>>()?;
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("accept".into())
                .spawn(move || shared.accept(&accepting, &tls))?
        };
        {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("watchdog".into())
                .spawn(move || shared.watch())?;
        }
        Ok(Server {
            addr,
            shared,
            workers,
            acceptor,
        })
    }

    /// The address actually bound (the real port when asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.shared))
    }

    /// How many connections are open now.
    pub fn open_connections(&self) -> usize {
        self.shared.capacity.open()
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
        let failure = lock(&self.shared.failure).clone();
        let drained = failure.is_none()
            && self
                .shared
                .capacity
                .wait_until_empty(Instant::now() + GRACE);
        if failure.is_none() && !drained {
            log::warn!(
                "{} connection(s) still open {GRACE:?} after the stop; closing them",
                self.shared.capacity.open()
            );
        }
        self.shared.finish();
        if drained {
            for worker in self.workers {
                if worker.join().is_err() {
                    log::error!("a worker thread panicked outside a request");
                }
            }
        }
        match failure {
            Some(why) => Err(Failed(why)),
            None => Ok(()),
        }
    }
}

/// Reads the PEM files of `--tls-cert` and `--tls-key`, with a clear error
/// for a file that is not what it should be.
fn load_tls(cert: &Path, key: &Path) -> io::Result<tiny_http::SslConfig> {
    let read = |path: &Path, marker: &str, what: &str| {
        let bytes = std::fs::read(path).map_err(|err| {
            io::Error::other(format!("TLS: cannot read {}: {err}", path.display()))
        })?;
        if !String::from_utf8_lossy(&bytes).contains(marker) {
            return Err(io::Error::other(format!(
                "TLS: {} holds no PEM {what}",
                path.display()
            )));
        }
        Ok(bytes)
    };
    Ok(tiny_http::SslConfig {
        certificate: read(cert, "-----BEGIN CERTIFICATE-----", "certificate")?,
        private_key: read(key, "PRIVATE KEY-----", "private key")?,
    })
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The accept thread: see the module comment.
    fn accept(self: &Arc<Self>, listener: &tiny_http::Listener, tls: &tiny_http::SslContextWrap) {
        // When accepting started failing without a break, and the pause
        // before the next try.
        let mut failing: Option<(Instant, Duration)> = None;
        // Whether the cap was reached and not yet left.
        let mut full = false;
        loop {
            let capacity = &self.capacity;
            if capacity.open() >= capacity.max() && !full {
                full = true;
                log::warn!(
                    "{} connections open, the most --max-connections allows: new connections wait in the listen queue",
                    capacity.max()
                );
            }
            if !capacity.wait_for_room(|| self.stopping()) {
                return;
            }
            full &= capacity.open() * 10 >= capacity.max() * 9;
            // tiny_http panics when it cannot duplicate the accepted socket
            // (descriptors exhausted); that is one more failed accept.
            let accepted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tiny_http::Server::accept_connection(listener, tls)
            }))
            .unwrap_or_else(|_| {
                Err(io::Error::other(
                    "tiny_http panicked setting up a connection",
                ))
            });
            if self.stopping() {
                return;
            }
            let err = match accepted {
                Ok(Some(client)) => {
                    failing = None;
                    let secure = client.secure();
                    let slot = self.capacity.take();
                    let shared = Arc::clone(self);
                    let spawned = self.pool.run(Box::new(move || {
                        shared
                            .connections
                            .read(client, secure, slot, |exchange| shared.submit(exchange));
                    }));
                    match spawned {
                        Ok(()) => continue,
                        // The connection was dropped, which closed it.
                        Err(err) => io::Error::new(
                            err.kind(),
                            format!("cannot start a connection thread: {err}"),
                        ),
                    }
                }
                // A TLS session could not be set up; tiny_http closed it.
                Ok(None) => continue,
                Err(err) if transient(&err) => continue,
                Err(err) => err,
            };
            let (since, pause) = match failing {
                None => {
                    log::warn!("accepting a connection failed: {err}; retrying");
                    (Instant::now(), Duration::from_millis(10))
                }
                Some((since, pause)) => (since, (pause * 2).min(Duration::from_secs(1))),
            };
            if since.elapsed() >= GIVE_UP_AFTER {
                self.fail(format!(
                    "accepting connections has failed for {GIVE_UP_AFTER:?} (last error: {err}); stopping so a supervisor can restart the server"
                ));
                return;
            }
            failing = Some((since, pause));
            thread::sleep(pause);
        }
    }

    /// Queues a request for the workers; gives it back once the server
    /// has finished.
    fn submit(&self, exchange: Exchange) -> Option<Exchange> {
        let mut queue = lock(&self.queue);
        if self.finished.load(Ordering::SeqCst) {
            return Some(exchange);
        }
        queue.exchanges.push_back(exchange);
        let idle = queue.idle > 0;
        drop(queue);
        if idle {
            self.queued.notify_one();
        }
        None
    }

    /// One worker: serves queued requests until the server has finished
    /// and the queue is empty.
    fn work(&self) {
        loop {
            let exchange = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(exchange) = queue.exchanges.pop_front() {
                        break exchange;
                    }
                    if self.finished.load(Ordering::SeqCst) {
                        return;
                    }
                    queue.idle += 1;
                    queue = self
                        .queued
                        .wait(queue)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    queue.idle -= 1;
                }
            };
            self.connections.serve(exchange);
        }
    }

    fn stop(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Shutting down a listening socket makes a blocked accept() fail,
        // which ends the accept loop: no new connections.
        if let Err(err) = self.listener.shutdown(std::net::Shutdown::Read) {
            log::warn!("cannot shut down the listening socket: {err}");
        }
        self.connections.stop();
        self.pool.stop();
    }

    /// Stops the server because it cannot serve: `wait` returns `why`.
    fn fail(&self, why: String) {
        lock(&self.failure).get_or_insert(why);
        self.stop();
    }

    /// The grace period is over: idle workers exit.
    fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        // Taking the lock orders this wake-up after any worker's check of
        // `finished`, so none waits for ever.
        drop(lock(&self.queue));
        self.queued.notify_all();
    }

    /// The watchdog thread: every [`WATCH_EVERY`], counts the connections
    /// stuck reading a request head (see the module comment).
    fn watch(&self) {
        // Since when stuck connections hold half the capacity or more.
        let mut since: Option<Instant> = None;
        while !self.stopping() {
            thread::sleep(WATCH_EVERY);
            let stuck = self.capacity.stuck(self.stuck_after);
            let max = self.capacity.max();
            if stuck * 2 < max {
                if since.take().is_some() {
                    log::info!("{stuck} of {max} connections stuck: serving normally again");
                    self.health.set(None);
                }
                continue;
            }
            let trouble = format!(
                "{stuck} of {max} connections are stuck reading a request head for over {:?} (a client sending its head a byte at a time, or an HTTP/2 request line, which the HTTP library cannot refuse)",
                self.stuck_after
            );
            let began = *since.get_or_insert_with(|| {
                log::warn!(
                    "{trouble}; exiting in {:?} unless they finish. Put a reverse proxy in front: README, Limits and hardening",
                    self.stuck_for
                );
                Instant::now()
            });
            self.health.set(Some(trouble.clone()));
            if began.elapsed() >= self.stuck_for {
                self.fail(format!(
                    "{trouble}, for {:?}; stopping so a supervisor can restart the server",
                    self.stuck_for
                ));
                return;
            }
        }
    }
}

/// Accept errors that concern one connection, or none: accept again at
/// once. `WouldBlock` is the read timeout passing without a connection.
fn transient(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// The workers' queue.
#[derive(Default)]
struct Queue {
    exchanges: VecDeque<Exchange>,
    /// Workers waiting on `queued`. Under load none waits, and a request
    /// queued then wakes nobody: a wake-up is a system call even when no
    /// thread waits, one per request otherwise.
    idle: usize,
}

type Job = Box<dyn FnOnce() + Send>;

/// The connection threads. A new connection goes to a waiting thread if
/// one is free, or else to a new thread, at once: never behind another
/// connection. Counting free threads under the same lock as the jobs
/// handed to them is what makes "free" exact. A thread exits after
/// [`CONNECTION_THREAD_IDLE`] without a connection.
#[derive(Default)]
struct Pool {
    state: Mutex<PoolState>,
    wake: Condvar,
}

#[derive(Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job (some may have been handed one already:
    /// those not yet claimed number `waiting - jobs.len()`).
    waiting: usize,
    stopping: bool,
}

impl Pool {
    /// Runs `job` on a free thread, or on a new one. Fails only when a
    /// thread cannot be started; the job is then dropped.
    fn run(self: &Arc<Self>, job: Job) -> io::Result<()> {
        let mut state = lock(&self.state);
        if state.waiting > state.jobs.len() {
            state.jobs.push_back(job);
            drop(state);
            self.wake.notify_one();
            return Ok(());
        }
        drop(state);
        let pool = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("connection".into())
            .spawn(move || {
                job();
                pool.wait_for_jobs();
            });
        spawned.map(drop)
    }

    fn wait_for_jobs(&self) {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.jobs.pop_front() {
                drop(state);
                job();
                state = lock(&self.state);
                continue;
            }
            if state.stopping {
                return;
            }
            state.waiting += 1;
            let (guard, waited) = self
                .wake
                .wait_timeout(state, CONNECTION_THREAD_IDLE)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = guard;
            state.waiting -= 1;
            if waited.timed_out() && state.jobs.is_empty() {
                return;
            }
        }
    }

    /// Lets every waiting thread exit.
    fn stop(&self) {
        lock(&self.state).stopping = true;
        self.wake.notify_all();
    }
}
