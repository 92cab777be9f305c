//! The listening socket, the worker pool, and keeping the server listening.
//! With `connection.rs`, the only modules that touch sockets.
//!
//! tiny_http runs one thread that accepts connections and one thread per
//! connection that parses requests and queues them. We run `--threads`
//! workers; each loops `recv()` and hands the request to
//! [`Connections::dispatch`].
//!
//! **Timeouts.** tiny_http sets none and does not hand out its sockets, so
//! we set `SO_RCVTIMEO` and `SO_SNDTIMEO` on the listening socket: Linux
//! copies both to every accepted connection, which gives each a read and a
//! write timeout. Linux also applies `SO_RCVTIMEO` to `accept()` itself, so
//! after that long without a new connection tiny_http's accept loop fails
//! and ends. It also ends when `accept()` fails for want of descriptors.
//!
//! **Heartbeat.** To keep that from happening on an idle server, a thread
//! connects to the listener every third of the read timeout and sends an
//! empty line, which tiny_http answers with 400 on its own; the accept
//! resets the clock. No answer within [`PROBE_TIMEOUT`] means the accept
//! loop is gone without a word (its thread panics when it runs out of
//! descriptors), and the heartbeat starts a new generation.
//!
//! **Generations.** Whenever the accept loop ends and we did not ask it to,
//! the worker that receives its last error starts a new tiny_http server on
//! a duplicate of the same listening socket (retrying while descriptors are
//! exhausted) and makes it current; the other workers follow. The old
//! server keeps its open connections, and a drainer thread serves them
//! until they have been quiet for a read timeout. So the server never
//! stays alive but deaf; if no new generation can be started for
//! [`GIVE_UP_AFTER`], it stops, and `main` exits non-zero for a supervisor
//! to restart it.
//!
//! **Shutdown.** [`Stopper::stop`] shuts the listening socket down, which
//! ends the accept loop for good, then wakes every worker. Requests already
//! queued are served first; a worker finishes the request in hand first.

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::config::Config;
pub use crate::connection::Handler;
use crate::connection::{Connections, Settings, lock};

/// How long the heartbeat waits for tiny_http to answer its probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long to keep trying to start a new generation before giving up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(300);

/// How many connection threads tiny_http keeps ready. Its pool starts a
/// thread for a new connection only when it counts no idle one, and that
/// count lags in a burst: connections beyond the idle threads wait until
/// some other connection closes. Enough idle threads for a burst of this
/// many connections avoids it, at ~9 KB of memory each.
pub const CONNECTION_THREADS: usize = 64;

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
}

/// What the workers, drainers and the stopper share.
struct Shared {
    /// The tiny_http server whose accept loop is running.
    current: Mutex<Arc<tiny_http::Server>>,
    /// Our own handle on the listening socket: each generation gets a
    /// duplicate of it, and `stop` shuts it down.
    listener: Socket,
    addr: SocketAddr,
    workers: usize,
    read_timeout: Duration,
    connections: Connections,
    stopping: AtomicBool,
    /// Held while a generation is being replaced: when the current one
    /// started, and the pause taken before starting it.
    replacing: Mutex<(Instant, Duration)>,
    /// The heartbeat thread, to wake it when stopping.
    heartbeat: Mutex<Option<thread::Thread>>,
    /// Set when the server stopped because no generation could start.
    failed: AtomicBool,
    /// The certificate and key for HTTPS (`--tls-cert`, `--tls-key`).
    tls: Option<tiny_http::SslConfig>,
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
        let listener = Socket::from(listener);
        let tls = match &config.tls {
            Some((cert, key)) => Some(load_tls(cert, key)?),
            None => None,
        };
        let first = open_generation(&listener, addr, tls.as_ref())?;
        let shared = Arc::new(Shared {
            current: Mutex::new(Arc::new(first)),
            listener,
            addr,
            workers: config.threads,
            read_timeout: config.read_timeout,
            connections: Connections::new(
                handler,
                Settings {
                    max_body_bytes: config.max_body_bytes,
                    read_timeout: config.read_timeout,
                    cors: config.cors.clone(),
                },
            ),
            stopping: AtomicBool::new(false),
            replacing: Mutex::new((Instant::now(), Duration::ZERO)),
            heartbeat: Mutex::new(None),
            failed: AtomicBool::new(false),
            tls,
        });
        let heartbeat = {
            let shared = Arc::downgrade(&shared);
            let target = heartbeat_target(addr);
            let every = config.read_timeout / 3;
            thread::Builder::new()
                .name("heartbeat".into())
                .spawn(move || heartbeat(&shared, target, every))?
        };
        *lock(&shared.heartbeat) = Some(heartbeat.thread().clone());
        let workers = (0..config.threads)
            .map(|n| {
                let shared = Arc::clone(&shared);
                thread::Builder::new()
                    .name(format!("worker-{n}"))
                    .spawn(move || shared.work())
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Server {
            addr,
            shared,
            workers,
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
        if self.shared.failed.load(Ordering::SeqCst) {
            Err(AcceptFailed)
        } else {
            Ok(())
        }
    }
}

/// Where the heartbeat connects: the bound address, or loopback when
/// bound to every address.
fn heartbeat_target(addr: SocketAddr) -> SocketAddr {
    let mut target = addr;
    if target.ip().is_unspecified() {
        target.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    target
}

/// Connects to the listener every `every` until the server stops or is
/// gone: see the module comment.
fn heartbeat(shared: &std::sync::Weak<Shared>, target: SocketAddr, every: Duration) {
    loop {
        thread::park_timeout(every);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.stopping() {
            return;
        }
        let http = shared.current();
        if let Err(err) = probe(target) {
            log::warn!("the accept loop did not answer the heartbeat ({err}); restarting it");
            shared.replace(http, &err);
        }
    }
}

/// Connects, sends an empty line, and waits for tiny_http's 400, or, over
/// TLS, for the connection to be closed: either way the connection was
/// accepted. A connection nobody accepts gets neither, and the read times
/// out.
fn probe(target: SocketAddr) -> io::Result<()> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(&target, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT))?;
    stream.write_all(b"\r\n")?;
    let mut answer = [0u8; 12];
    stream.read(&mut answer).map(|_| ())
}

/// A tiny_http server accepting on a duplicate of `listener`, speaking
/// TLS when `tls` is given.
fn open_generation(
    listener: &Socket,
    addr: SocketAddr,
    tls: Option<&tiny_http::SslConfig>,
) -> io::Result<tiny_http::Server> {
    let duplicate: TcpListener = listener.try_clone()?.into();
    let settings = tiny_http::ServerConfig {
        addr: tiny_http::ConfigListenAddr::IP(vec![addr]),
        ssl: tls.cloned(),
        min_threads: Some(CONNECTION_THREADS),
        max_threads: None,
    };
    // tiny_http panics on a key it cannot parse rather than failing.
    std::panic::catch_unwind(|| {
        tiny_http::Server::from_listener(duplicate, tiny_http::ListenAddr::IP(addr), settings)
    })
    .map_err(|_| io::Error::other("TLS: the private key cannot be read"))?
    .map_err(io::Error::other)
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
    fn current(&self) -> Arc<tiny_http::Server> {
        Arc::clone(&lock(&self.current))
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// One worker: takes requests from the current generation until the
    /// server stops.
    fn work(self: &Arc<Self>) {
        // The generation changes only when its accept loop ends, so a worker
        // keeps its handle and looks at `current` only when woken.
        let mut http = self.current();
        loop {
            match http.recv() {
                Ok(Ok(request)) => self.connections.dispatch(request),
                // A client closed its keep-alive connection or timed out, or
                // sent something tiny_http could not parse (it answered 400).
                Ok(Err(err)) => log::debug!("connection ended: {err}"),
                // Either `stop` or a replacement woke us (then the server is
                // stopping, or `http` is no longer current), or the accept
                // loop of the current generation ended.
                Err(err) => {
                    if self.stopping() {
                        return;
                    }
                    if Arc::ptr_eq(&http, &self.current()) {
                        self.replace(Arc::clone(&http), &err);
                    }
                    http = self.current();
                }
            }
        }
    }

    /// Starts a new generation in place of `old`, whose accept loop ended
    /// with `err`: see the module comment.
    fn replace(self: &Arc<Self>, old: Arc<tiny_http::Server>, err: &io::Error) {
        // A worker and the heartbeat may both find `old` dead: replace once.
        let mut replacing = lock(&self.replacing);
        if !Arc::ptr_eq(&old, &self.current()) {
            return;
        }
        if err.kind() == io::ErrorKind::WouldBlock {
            log::debug!("no connection for a read timeout; restarting the accept loop");
        } else {
            log::warn!("accepting connections failed: {err}; restarting the accept loop");
        }
        // A generation that dies as soon as it starts (descriptors still
        // exhausted) must not be replaced at once, again and again: each
        // one costs a pool of threads. Back off while they keep dying young.
        let (born, last_pause) = *replacing;
        let pause = if born.elapsed() < Duration::from_secs(2) {
            (last_pause * 2).clamp(Duration::from_millis(50), Duration::from_secs(1))
        } else {
            Duration::ZERO
        };
        thread::sleep(pause);
        *replacing = (Instant::now(), pause);
        let started = Instant::now();
        let mut pause = Duration::from_millis(10);
        let fresh = loop {
            match open_generation(&self.listener, self.addr, self.tls.as_ref()) {
                Ok(fresh) => break fresh,
                Err(err) if started.elapsed() < GIVE_UP_AFTER => {
                    log::warn!("cannot restart the accept loop yet: {err}; retrying in {pause:?}");
                    thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                    if self.stopping() {
                        return;
                    }
                }
                Err(err) => {
                    log::error!(
                        "cannot restart the accept loop: {err}; stopping so a supervisor can restart the server"
                    );
                    self.failed.store(true, Ordering::SeqCst);
                    self.stop_with(Some(&old));
                    return;
                }
            }
        };
        *lock(&self.current) = Arc::new(fresh);
        if self.stopping() {
            // `stop` may have woken the old generation before we replaced it.
            self.wake_all(&self.current());
        }
        // Move the other workers, blocked on the old generation, to the new one.
        self.wake_all(&old);
        let shared = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("drainer".into())
            .spawn(move || shared.drain(&old));
        if let Err(err) = spawned {
            log::warn!("cannot start a thread for the previous accept loop's connections: {err}");
        }
    }

    /// Serves the connections of a replaced generation until none has sent
    /// anything for a read timeout (each idle one has then timed out).
    fn drain(&self, old: &tiny_http::Server) {
        let quiet_enough = self.read_timeout + Duration::from_secs(1);
        let mut last_seen = Instant::now();
        while !self.stopping() && last_seen.elapsed() < quiet_enough {
            match old.recv_timeout(Duration::from_millis(500)) {
                Ok(Ok(Some(request))) => {
                    last_seen = Instant::now();
                    self.connections.dispatch(request);
                }
                Ok(Ok(None)) => {}
                Ok(Err(err)) => {
                    last_seen = Instant::now();
                    log::debug!("connection ended: {err}");
                }
                Err(_) => {}
            }
        }
    }

    fn wake_all(&self, http: &tiny_http::Server) {
        // One more than the workers, in case a drainer takes one.
        for _ in 0..=self.workers {
            if let Err(err) = http.unblock() {
                log::warn!("cannot wake a worker: {err}");
            }
        }
    }

    fn stop(&self) {
        self.stop_with(None);
    }

    /// Stops accepting and wakes every worker, on the current generation
    /// and on `also` (one being replaced when we give up).
    fn stop_with(&self, also: Option<&tiny_http::Server>) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Shutting down a listening socket makes a blocked accept() fail,
        // which ends tiny_http's accept thread: no new connections.
        if let Err(err) = self.listener.shutdown(std::net::Shutdown::Read) {
            log::warn!("cannot shut down the listening socket: {err}");
        }
        if let Some(heartbeat) = lock(&self.heartbeat).take() {
            heartbeat.unpark();
        }
        self.wake_all(&self.current());
        if let Some(old) = also {
            self.wake_all(old);
        }
    }
}
