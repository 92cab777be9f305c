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
//! 2. That thread reads the connection's requests one after the other
//!    (tiny_http parses each head) and serves each in turn
//!    (`connection.rs`): it turns the request into an
//!    [`http::Request`](crate::http::Request), calls the handler, tags the
//!    [`Response`](crate::http::Response) with the request's id
//!    (`X-Request-Id`), and writes it back. At most `--threads` requests
//!    are handled at once.
//!
//! # Around tiny_http's defects
//!
//! Each has its own piece, whose comment names the defect and the test
//! that proves the workaround:
//! - `accept.rs`: tiny_http's accept loop ends for good on its first error,
//!   and its thread pool can leave a new connection unread behind another;
//!   we accept and keep the threads ourselves.
//! - `capacity.rs`: a request line with `HTTP/2.0` deadlocks a connection's
//!   thread, and a request head has no deadline; neither can be freed. The
//!   connections are capped, and stuck ones make the server give up.
//! - `connection.rs`: framing tiny_http cannot check, a body's deadline,
//!   bodies on upgrade offers, `100 Continue` only when the body is read;
//! - `unread.rs`: a body refused unread, which tiny_http reads to its end
//!   before it lets a response be written.
//!
//! **Timeouts.** tiny_http does not hand out its sockets, so [`bind`] sets
//! `SO_RCVTIMEO` and `SO_SNDTIMEO` on the listening socket: Linux copies
//! both to every accepted connection.
//!
//! **Shutdown.** [`Stopper::stop`] stops accepting. Requests in flight get
//! up to [`GRACE`]: a body still arriving is read and answered, responses
//! held back by a delay are sent at once, and each says
//! `Connection: close`. [`Server::wait`] returns once no request is in
//! flight, or when the grace period is over. A connection waiting for its
//! next request has nothing in flight: it is not waited for, and closes
//! when the process exits.

mod accept;
pub mod access_log;
pub mod capacity;
mod connection;
mod stream;
#[cfg(test)]
mod tests;
mod unread;

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::health::Health;
use crate::http::Handler;
use connection::Shared;

pub use accept::{Failed, GIVE_UP_AFTER, STUCK_FOR, STUCK_MARGIN, max_unavailable};

/// How long requests in flight get to finish once the server is stopping.
pub const GRACE: Duration = Duration::from_secs(5);

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
    /// Whether to write access lines at all (`--quiet` turns them off;
    /// `--log-level` below `info` too).
    pub access_log: bool,
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
        let shared = Arc::new(Shared::new(handler, settings));
        let (accepting, acceptor) = accept::start(listener, settings, shared, health)?;
        Ok(Server {
            addr,
            accepting,
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

    /// Waits until the server stops, then until no request is in flight
    /// or [`GRACE`] is over. `Err` when the server stopped because it
    /// could not serve, not because it was asked to: it then returns at
    /// once, without waiting for what may never finish.
    pub fn wait(self) -> Result<(), Failed> {
        // The accept thread ends when the server stops.
        if self.acceptor.join().is_err() {
            log::error!(target: crate::logging::LOG, "the accept thread panicked");
        }
        if let Some(failure) = self.accepting.failure() {
            return Err(failure);
        }
        let capacity = &self.accepting.capacity;
        if !capacity.wait_until_idle(Instant::now() + GRACE) {
            log::warn!(target: crate::logging::LOG, "{} request(s) still in flight {GRACE:?} after the stop; closing their connections",
                capacity.serving()
            );
        }
        Ok(())
    }
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
