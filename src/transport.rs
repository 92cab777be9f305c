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
//!    are handled at once; a response is written without a turn, by one
//!    deadline (`body.rs`).
//!
//! # Around tiny_http's defects
//!
//! Each defect of the library that no setting reaches has a piece of its
//! own, whose module comment names the defect and the test that proves the
//! workaround: `accept.rs` (the accept loop and the connections' threads),
//! `capacity.rs` (the cap on connections, and those stuck in a head),
//! `body.rs` (framing, a body's deadline, a response's deadline),
//! `unread.rs` (a body refused unread) and `sockets.rs` (an idle connection
//! closed). What cannot be fixed, and the bound on it, is told for those
//! who run the server in docs/limits.md.
//!
//! **Timeouts.** tiny_http does not hand out its sockets, so [`bind`] sets
//! `SO_RCVTIMEO` (the read timeout) and `SO_SNDTIMEO` (a tick of
//! `body.rs`) on the listening socket: Linux copies both to every
//! accepted connection.
//!
//! **Shutdown.** [`Stopper::stop`] stops accepting. Requests in flight get
//! up to [`GRACE`]: a body still arriving is read and answered, responses
//! held back by a delay are sent at once, and each says
//! `Connection: close`. [`Server::wait`] returns once no request is in
//! flight, or when the grace period is over. A connection waiting for its
//! next request has nothing in flight: it is not waited for, and closes
//! when the process exits; but one that began waiting just before the
//! stop may be reading a head and a short body inside the library, and
//! gets [`capacity::LINGER`] to hand it over. Nor is a stream
//! (`/api/events`) waited for: each ends at once, and one whose client
//! stopped reading is shut down (`sockets.rs`), its write blocked or not.

mod accept;
pub mod access_log;
mod body;
pub mod capacity;
mod connection;
mod sockets;
mod stream;
mod unread;

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
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
    /// The most a whole response may take to write.
    pub write_timeout: Duration,
    /// How long a connection may wait for its next request once it has
    /// answered one (`--keep-alive-timeout`).
    pub keep_alive_timeout: Duration,
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
/// timeouts: the send timeout is a short tick, after which a response's
/// own deadline is looked at again (`body.rs`).
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
    socket.set_write_timeout(Some(settings.write_timeout.min(body::TICK)))?;
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
        // The streams were told to end at the stop; one still open is
        // blocked writing to a client that does not read.
        let streams = capacity.streaming();
        if !streams.is_empty() {
            self.accepting
                .close(&streams, "the stop, a stream's client not reading");
        }
        Ok(())
    }
}

/// The transport's locks are taken with the crate's one helper.
pub(crate) use crate::error::lock;

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
