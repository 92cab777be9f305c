//! The worker pool: the only module that touches sockets.
//!
//! tiny_http runs one thread that accepts connections and one thread per
//! connection that parses requests and queues them. We run `--threads`
//! workers; each loops `recv()` → [`serve`] → write the reply, and `serve`
//! is the whole life of one request:
//!
//! 1. copy the method, target and the few headers we use into a
//!    [`Request`], with the body as a lazy reader;
//! 2. call the handler under `catch_unwind`, so a panic becomes a 500 and
//!    the worker lives on;
//! 3. encode the [`Reply`] and write it back in one go;
//! 4. log one access line.
//!
//! The handler is a parameter, so the router can be tested without
//! sockets and this loop with a handler that panics.
//!
//! Shutdown: [`Stopper::stop`] shuts down the listening socket, which ends
//! tiny_http's accept loop (no new connections), then wakes every worker.
//! Requests already queued are served first; a worker finishes the
//! request in hand before it exits.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Instant, SystemTime};

use socket2::{Domain, Protocol, Socket, Type};

use crate::config::Config;
use crate::error::ApiError;
use crate::request::{Method, Request};
use crate::response::Reply;

/// What answers a request: the router in production, anything in tests.
pub type Handler = dyn Fn(&mut Request<'_>) -> Reply + Send + Sync;

/// Creates the listening socket. We do it ourselves, rather than let
/// tiny_http bind, to set `TCP_NODELAY` on it: Linux copies it to every
/// accepted connection, and without it a response over about 1 KiB waits
/// ~40 ms for the client's delayed ACK (Nagle's algorithm).
pub fn bind(host: &str, port: u16) -> io::Result<TcpListener> {
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

/// What the workers and the stopper share.
struct Shared {
    http: tiny_http::Server,
    /// A second handle on the listening socket, to shut it down on stop.
    listener: Socket,
    workers: usize,
    stopping: AtomicBool,
    /// Set when accepting failed for good rather than by our own stop.
    failed: AtomicBool,
}

/// Stops the server from any thread (a signal handler thread, a test).
#[derive(Clone)]
pub struct Stopper(Arc<Shared>);

impl Stopper {
    /// Stops accepting connections and lets every worker finish and exit.
    pub fn stop(&self) {
        if self.0.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Shutting down a listening socket makes a blocked accept() fail,
        // which ends tiny_http's accept thread: no new connections.
        if let Err(err) = self.0.listener.shutdown(std::net::Shutdown::Read) {
            log::warn!("cannot shut down the listening socket: {err}");
        }
        for _ in 0..self.0.workers {
            if let Err(err) = self.0.http.unblock() {
                log::warn!("cannot wake a worker: {err}");
            }
        }
    }
}

/// Why a server stopped other than by [`Stopper::stop`].
#[derive(Debug)]
pub struct AcceptFailed;

impl std::fmt::Display for AcceptFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the server stopped accepting connections")
    }
}

impl std::error::Error for AcceptFailed {}

impl Server {
    /// Starts serving `listener` with `config.threads` workers.
    pub fn start(
        listener: TcpListener,
        config: &Config,
        handler: Arc<Handler>,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let spare = Socket::from(listener.try_clone()?);
        let settings = tiny_http::ServerConfig {
            addr: tiny_http::ConfigListenAddr::IP(vec![addr]),
            ssl: None,
            min_threads: None,
            max_threads: None,
        };
        let http =
            tiny_http::Server::from_listener(listener, tiny_http::ListenAddr::IP(addr), settings)
                .map_err(io::Error::other)?;
        let shared = Arc::new(Shared {
            http,
            listener: spare,
            workers: config.threads,
            stopping: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        });
        let max_body_bytes = config.max_body_bytes;
        let workers = (0..config.threads)
            .map(|n| {
                let shared = Arc::clone(&shared);
                let handler = Arc::clone(&handler);
                thread::Builder::new()
                    .name(format!("worker-{n}"))
                    .spawn(move || work(&shared, &*handler, max_body_bytes))
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
    /// because accepting failed, not because it was asked to.
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

/// One worker: takes requests until the server stops.
fn work(shared: &Arc<Shared>, handler: &Handler, max_body_bytes: usize) {
    loop {
        match shared.http.recv() {
            Ok(Ok(request)) => serve(request, handler, max_body_bytes),
            // A client closed its keep-alive connection, or sent something
            // tiny_http could not parse (it has answered 400 itself).
            Ok(Err(err)) => log::debug!("connection ended: {err}"),
            Err(err) => {
                if !shared.stopping.load(Ordering::SeqCst) {
                    log::error!(
                        "accepting connections failed: {err}; stopping so a supervisor can restart the server"
                    );
                    shared.failed.store(true, Ordering::SeqCst);
                    Stopper(Arc::clone(shared)).stop();
                }
                return;
            }
        }
    }
}

/// The body of a tiny_http request as a plain reader. Asking tiny_http for
/// the reader sends `100 Continue` when the client expects it, so we ask
/// only on the first read: a request refused before its body is read
/// (413 from `Content-Length`, 415) never invites the body.
struct LazyBody<'a> {
    request: &'a mut tiny_http::Request,
    /// Whether a read has reached the end of the body.
    finished: bool,
}

impl Read for LazyBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.request.as_reader().read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.finished = true;
        }
        Ok(n)
    }
}

fn header(request: &tiny_http::Request, name: &str) -> Option<String> {
    request
        .headers()
        .get(name)
        .map(|value| value.as_str().to_string())
}

/// Serves one request from start to finish: see the module comment.
fn serve(mut request: tiny_http::Request, handler: &Handler, max_body_bytes: usize) {
    let started = Instant::now();
    let method_name = request.method().as_str().to_string();
    let method = Method::parse(&method_name);
    let target = request.url().to_string();
    let content_type = header(&request, "Content-Type");
    let accept = header(&request, "Accept");
    let raw_length = header(&request, "Content-Length");
    let connection = connection_header(&request);
    let content_length = request.body_length().map(|n| n as u64);
    let chunked = request.headers().contains("Transfer-Encoding");
    // Whether nothing of the body is left unread on the connection.
    let mut body_finished = !chunked && content_length.unwrap_or(0) == 0;

    let reply = match framing_error(raw_length.as_deref()) {
        Some(err) => Reply::from(err),
        None => {
            let mut body = LazyBody {
                request: &mut request,
                finished: body_finished,
            };
            let mut req = Request {
                method,
                method_name: &method_name,
                target: &target,
                content_type: content_type.as_deref(),
                accept: accept.as_deref(),
                content_length,
                body: &mut body,
                max_body_bytes,
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| handler(&mut req)));
            body_finished = body.finished;
            outcome.unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("handler panicked on {method_name} {target}: {what}");
                Reply::from(ApiError::Internal)
            })
        }
    };

    let date = httpdate::fmt_http_date(SystemTime::now());
    let remote = request
        .remote_addr()
        .map_or_else(|| "-".to_string(), |a| a.to_string());
    let sent = if body_finished {
        write_reply(request, &reply, &date, method == Method::Head, connection)
    } else {
        respond_before_drain(request, &reply, &date)
    };
    match sent {
        Ok(bytes) => log::info!(
            "{remote} {method_name} {target} {} {bytes}B {:.3}ms",
            reply.status,
            started.elapsed().as_secs_f64() * 1000.0
        ),
        Err(err) => log::debug!("cannot send the response to {remote}: {err}"),
    }
}

/// The usual way out: our own encoding, written in one go. Returns the
/// number of bytes sent.
fn write_reply(
    request: tiny_http::Request,
    reply: &Reply,
    date: &str,
    head_only: bool,
    connection: Option<&str>,
) -> io::Result<usize> {
    let bytes = reply.encode(date, head_only, connection);
    // `into_writer` drops the request, and with it the body reader, which
    // reads whatever is left of the body; here nothing is left.
    let mut writer = request.into_writer();
    writer.write_all(&bytes)?;
    writer.flush()?;
    Ok(bytes.len())
}

/// The way out when the body was not read to its end (a request refused
/// early). tiny_http reads and discards the rest of a body before the next
/// request, when the request is dropped; `into_writer` drops it before we
/// write, so a client waiting for `100 Continue`, or for our answer, would
/// wait forever. `respond` writes first, then drops. The price is
/// tiny_http's encoding of the head: its reason phrases and framing, and a
/// `Content-Length: 0` even on a 204. Returns the body bytes sent.
fn respond_before_drain(
    request: tiny_http::Request,
    reply: &Reply,
    date: &str,
) -> io::Result<usize> {
    let mut headers = vec![
        ("Date", date),
        ("Cache-Control", "no-store"),
        ("Server", "widgets-todos"),
    ];
    if let Some((content_type, _)) = &reply.body {
        headers.push(("Content-Type", content_type));
    }
    headers.extend(
        reply
            .headers
            .iter()
            .map(|(name, value)| (*name, value.as_str())),
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
    request.respond(response)?;
    Ok(length)
}

/// A `Content-Length` that is not plain digits makes the message's length
/// unknowable (RFC 9112 section 6.3), so we refuse to guess.
fn framing_error(content_length: Option<&str>) -> Option<ApiError> {
    let value = content_length?;
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(ApiError::BadRequest {
        detail: format!("ambiguous message framing: Content-Length '{value}' is not a number"),
        hint: None,
    })
}

/// The `Connection` header to send, mirroring what tiny_http decides for
/// the connection: close after this response when the client asked to, or
/// when it speaks HTTP/1.0 without asking for keep-alive.
fn connection_header(request: &tiny_http::Request) -> Option<&'static str> {
    let asked = header(request, "Connection").map(|v| v.to_ascii_lowercase());
    let http10 = *request.http_version() == tiny_http::HTTPVersion(1, 0);
    match asked.as_deref() {
        Some(v) if v.contains("close") => Some("close"),
        Some(v) if http10 && v.contains("keep-alive") => Some("keep-alive"),
        _ if http10 => Some("close"),
        _ => None,
    }
}
