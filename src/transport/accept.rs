//! Taking connections: the accept loop, the threads that read connections,
//! and the watchdog that gives up when they are stuck.
//!
//! tiny_http parses requests; the threads are ours, because of two defects
//! in its own server:
//! - its accept loop ends for good on the first accept error (descriptors
//!   exhausted, or the read timeout below), leaving the server alive but
//!   unable to take a connection (`tests/api/hardening.rs`,
//!   `the_server_keeps_accepting_through_idle_read_timeouts`);
//! - its pool starts a thread for a new connection from a stale count of
//!   idle threads, so in a burst a connection can wait for another
//!   keep-alive connection to close before it is read at all
//!   (`a_burst_of_keep_alive_connections_is_served_without_any_closing`).
//!
//! So one accept thread takes each new connection with tiny_http's
//! `accept_connection` and gives it at once to a thread of [`Pool`]: a
//! waiting one if there is one, a new one otherwise. At most
//! `--max-connections` are open (see `capacity.rs`). At the cap, a
//! newcomer is taken by closing the connection idle the longest (one that
//! has answered a request and waits for the next), as nginx does when its
//! connections run out; while none is idle, new connections wait in the
//! kernel's listen queue (`tests/api/keep_alive.rs`).
//!
//! **Accept errors.** Linux applies `SO_RCVTIMEO` to `accept()` too: a
//! timeout just means "accept again". Any other failure (descriptors or
//! memory exhausted; tiny_http panics when it cannot duplicate the new
//! socket) is retried after a pause growing to a second, the connection
//! waiting in the listen queue meanwhile. After [`GIVE_UP_AFTER`] of
//! failures without a break, the server stops, and `main` exits non-zero
//! for a supervisor to restart it.
//!
//! **Stuck connections.** Twice a second the watchdog counts connections
//! stuck inside tiny_http reading a request head (see `capacity.rs`).
//! While they hold half the places or more, `/healthz` answers 503 and the
//! log says why; if that lasts [`STUCK_FOR`] (or the read timeout, if
//! shorter), the server stops likewise: it is never alive but unable to
//! take a connection for more than [`max_unavailable`]
//! (`tests/api/capacity.rs`; `scripts/abuse.py`, the HTTP/2 flood). Idle
//! connections never count: a newcomer closes one. The watchdog also
//! closes every connection idle for longer than `--keep-alive-timeout`.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use socket2::Socket;

use super::capacity::Capacity;
use super::connection::{Shared, serve_connection};
use super::{Settings, capacity, lock, sockets};
use crate::health::Health;

/// How long accepting may keep failing before the server gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(60);

/// How much longer than the read timeout (which bounds an idle wait for the
/// next request) a connection may spend reading one request head before
/// it counts as stuck: this, or the read timeout if that is shorter.
pub const STUCK_MARGIN: Duration = Duration::from_secs(10);

/// How long stuck connections may hold half the capacity or more before
/// the server gives up: this, or the read timeout if that is shorter.
pub const STUCK_FOR: Duration = Duration::from_secs(10);

/// How often the watchdog counts stuck connections.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How long a connection thread waits for a new connection before it
/// exits. An idle server keeps none.
const THREAD_IDLE: Duration = Duration::from_secs(5);

/// The longest a server can be unable to take a connection, its capacity
/// held by stuck connections, before it stops: each becomes stuck at most
/// `stuck_after` after its head began, and the server gives up `stuck_for`
/// later; each is seen at the watchdog's next look, and two seconds cover
/// those and a busy machine's scheduling.
pub fn max_unavailable(read_timeout: Duration) -> Duration {
    read_timeout
        + read_timeout.min(STUCK_MARGIN)
        + read_timeout.min(STUCK_FOR)
        + Duration::from_secs(2)
}

/// Why a server stopped other than by `Stopper::stop`: it could not serve,
/// and a restart is the way out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed(pub String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}

/// What the accept thread, the watchdog and the stopper share.
pub(crate) struct Accepting {
    /// Our handle on the listening socket, for `stop` to shut it down.
    listener: Socket,
    pub capacity: Arc<Capacity>,
    shared: Arc<Shared>,
    pool: Arc<Pool>,
    health: Arc<Health>,
    /// How long a connection may read one request head before it is stuck,
    /// and how long stuck connections may hold half the capacity.
    stuck_after: Duration,
    stuck_for: Duration,
    /// `--keep-alive-timeout`.
    keep_alive: Duration,
    /// The server's port, which its connections' sockets are bound to.
    port: u16,
    stopping: AtomicBool,
    /// Why the server stopped, when it was not asked to.
    failure: Mutex<Option<Failed>>,
}

/// Starts the accept thread and the watchdog.
pub(crate) fn start(
    listener: TcpListener,
    settings: &Settings,
    shared: Arc<Shared>,
    health: Arc<Health>,
) -> io::Result<(Arc<Accepting>, JoinHandle<()>)> {
    let tls = match &settings.tls {
        Some((cert, key)) => Some(load_tls(cert, key)?),
        None => None,
    };
    // tiny_http panics on a key it cannot parse rather than failing.
    let tls = std::panic::catch_unwind(|| tiny_http::SslContextWrap::build_ssl_capabilities(tls))
        .map_err(|_| io::Error::other("TLS: the private key cannot be read"))?
        .map_err(|err| io::Error::other(format!("TLS: {err}")))?;
    let library_listener = tiny_http::Listener::from(listener.try_clone()?);
    let max = settings
        .max_connections
        .unwrap_or_else(|| capacity::default_max(capacity::descriptor_limit()));
    let read_timeout = settings.read_timeout;
    let port = listener.local_addr()?.port();
    let accepting = Arc::new(Accepting {
        listener: Socket::from(listener),
        capacity: Arc::new(Capacity::new(max)),
        shared,
        pool: Arc::default(),
        health,
        stuck_after: read_timeout + read_timeout.min(STUCK_MARGIN),
        stuck_for: read_timeout.min(STUCK_FOR),
        keep_alive: settings.keep_alive_timeout,
        port,
        stopping: AtomicBool::new(false),
        failure: Mutex::new(None),
    });
    let acceptor = {
        let accepting = Arc::clone(&accepting);
        thread::Builder::new()
            .name("accept".into())
            .spawn(move || accepting.accept(&library_listener, &tls))?
    };
    {
        let accepting = Arc::clone(&accepting);
        thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || accepting.watch())?;
    }
    Ok((accepting, acceptor))
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

impl Accepting {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Stops accepting; the connections' responses say `Connection:
    /// close` from now on, and delays are cut short.
    pub fn stop(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // The responses say `Connection: close` before new connections
        // are refused, so a client refused knows that the answers still
        // to come close (`tests/api/shutdown.rs`).
        self.shared.stop();
        // Shutting down a listening socket makes a blocked accept() fail,
        // which ends the accept loop.
        if let Err(err) = self.listener.shutdown(std::net::Shutdown::Read) {
            log::warn!(target: crate::logging::LOG, "cannot shut down the listening socket: {err}");
        }
        self.pool.stop();
    }

    /// Stops the server because it cannot serve.
    fn fail(&self, why: String) {
        lock(&self.failure).get_or_insert(Failed(why));
        self.stop();
    }

    pub fn failure(&self) -> Option<Failed> {
        lock(&self.failure).clone()
    }

    /// Closes the connections of `peers` (`sockets.rs`), for `why`.
    pub fn close(&self, peers: &[SocketAddr], why: &str) {
        match sockets::shut_down(peers, self.port) {
            Ok(_) => log::debug!("closed {} connection(s): {why}", peers.len()),
            Err(err) => {
                log::warn!(target: crate::logging::LOG, "cannot close {} connection(s) ({why}): {err}", peers.len());
            }
        }
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
                log::warn!(target: crate::logging::LOG, "{} connections open, the most --max-connections allows: each new connection closes the one idle the longest, or waits in the listen queue",
                    capacity.max()
                );
            }
            if !capacity.wait_for_room(|| self.stopping()) {
                return;
            }
            full &= capacity.open() * 10 >= capacity.max() * 9;
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
                    // At the cap: room was made by an idle connection, which
                    // closes now (its thread ends; the newcomer's starts).
                    if capacity.open() >= capacity.max()
                        && let Some(idlest) = capacity.idlest()
                    {
                        self.close(&[idlest], "the connection cap, for a new connection");
                    }
                    let slot = capacity.take();
                    let shared = Arc::clone(&self.shared);
                    let serve = move || serve_connection(&shared, client, slot);
                    match self.pool.run(Box::new(serve)) {
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
                    log::warn!(target: crate::logging::LOG, "accepting a connection failed: {err}; retrying");
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

    /// The watchdog thread: see the module comment.
    fn watch(&self) {
        // Since when stuck connections hold half the capacity or more.
        let mut since: Option<Instant> = None;
        while !self.stopping() {
            thread::sleep(WATCH_EVERY);
            let idle = self.capacity.idle_longer_than(self.keep_alive);
            if !idle.is_empty() {
                self.close(&idle, "--keep-alive-timeout");
            }
            let stuck = self.capacity.stuck(self.stuck_after);
            let max = self.capacity.max();
            if stuck * 2 < max {
                if since.take().is_some() {
                    log::info!(target: crate::logging::LOG, "{stuck} of {max} connections stuck: serving normally again");
                    self.health.set(None);
                }
                continue;
            }
            let trouble = format!(
                "{stuck} of {max} connections are stuck reading a request head for over {:?} (a client sending its head a byte at a time, or an HTTP/2 request line, which the HTTP library cannot refuse)",
                self.stuck_after
            );
            let began = *since.get_or_insert_with(|| {
                log::warn!(target: crate::logging::LOG, "{trouble}; exiting in {:?} unless they finish. Put a reverse proxy in front: docs/limits.md",
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

type Job = Box<dyn FnOnce() + Send>;

/// The connection threads. A new connection goes to a waiting thread if
/// one is free, or else to a new thread, at once: never behind another
/// connection. Counting free threads under the same lock as the jobs
/// handed to them is what makes "free" exact. A thread exits after
/// [`THREAD_IDLE`] without a connection.
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
                .wait_timeout(state, THREAD_IDLE)
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
