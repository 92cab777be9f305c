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
//! **Shutdown.** [`Stopper::stop`] shuts the listening socket down, which
//! ends the accept loop, and closes the queue: the workers serve what is
//! already queued, then exit. A worker finishes the request in hand first.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::config::Config;
pub use crate::connection::Handler;
use crate::connection::{Connections, Exchange, Settings, lock};

/// How long accepting may keep failing before the server gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(300);

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
    stopping: AtomicBool,
    /// Set when the server stopped because accepting kept failing.
    failed: AtomicBool,
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

/// Why a server stopped other than by [`Stopper::stop`].
#[derive(Debug)]
pub struct AcceptFailed;

impl std::fmt::Display for AcceptFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server could not accept connections for {GIVE_UP_AFTER:?} and stopped"
        )
    }
}

impl std::error::Error for AcceptFailed {}

impl Server {
    /// Starts serving `listener` (from [`bind`]) with `config.threads` workers.
    pub fn start(
        listener: TcpListener,
        config: &Config,
        handler: Arc<Handler>,
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
            stopping: AtomicBool::new(false),
            failed: AtomicBool::new(false),
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

    /// Waits until every worker has exited. `Err` when the server stopped
    /// because it could not accept connections, not because it was asked to.
    pub fn wait(self) -> Result<(), AcceptFailed> {
        for worker in self.workers {
            if worker.join().is_err() {
                log::error!("a worker thread panicked outside a request");
            }
        }
        if self.acceptor.join().is_err() {
            log::error!("the accept thread panicked");
        }
        if self.shared.failed.load(Ordering::SeqCst) {
            Err(AcceptFailed)
        } else {
            Ok(())
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
        loop {
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
                    let shared = Arc::clone(self);
                    let spawned = self.pool.run(Box::new(move || {
                        shared
                            .connections
                            .read(client, secure, |exchange| shared.submit(exchange));
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
                log::error!(
                    "accepting has failed for {GIVE_UP_AFTER:?} (last error: {err}); stopping so a supervisor can restart the server"
                );
                self.failed.store(true, Ordering::SeqCst);
                self.stop();
                return;
            }
            failing = Some((since, pause));
            thread::sleep(pause);
        }
    }

    /// Queues a request for the workers; gives it back once stopping.
    fn submit(&self, exchange: Exchange) -> Option<Exchange> {
        let mut queue = lock(&self.queue);
        if self.stopping() {
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

    /// One worker: serves queued requests until the server stops and the
    /// queue is empty.
    fn work(&self) {
        loop {
            let exchange = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(exchange) = queue.exchanges.pop_front() {
                        break exchange;
                    }
                    if self.stopping() {
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
        // Taking the lock orders this wake-up after any worker's check of
        // `stopping`, so none waits for ever.
        drop(lock(&self.queue));
        self.queued.notify_all();
        self.pool.stop();
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
