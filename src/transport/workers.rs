//! The threads between a connection and the handler: each connection's own
//! thread reads its requests and queues them; `--threads` workers take them
//! off the queue and serve them with [`super::serve`].
//!
//! A request whose body is still on its way (see `Framing::arrives_slowly`)
//! could hold a worker for up to the read timeout, and a few slow uploads
//! would hold them all: it is served on a thread of its own instead.
//!
//! Generic over the library's request type ([`Incoming`]), so the unit
//! tests (`tests.rs`) drive all of this with fake requests.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::connection::{Arrival, Connection, Request};
use super::delay::Delays;
use super::library::Incoming;
use super::{Handler, lock};

/// A request ready for a worker, with its connection.
type Work<R> = (Request<R>, Arc<Connection<R>>);

/// The requests ready for a worker, and how many workers wait for one.
struct Queue<R> {
    ready: VecDeque<Work<R>>,
    /// Under load no worker waits, and a request queued wakes nobody: a
    /// wake-up is a system call even when no thread waits (README,
    /// "Performance": futex calls per request 1.22 -> 0.45).
    idle: usize,
}

/// What connection threads and workers share.
pub(crate) struct Workers<R> {
    pub handler: Arc<dyn Handler>,
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
    /// `--read-timeout`: also the most a whole body may take.
    pub read_timeout: Duration,
    pub delays: Arc<Delays<R>>,
    queue: Mutex<Queue<R>>,
    /// Signalled when a request is queued while a worker waits, and when
    /// the workers finish.
    queued: Condvar,
    /// The server is stopping: requests are answered with
    /// `Connection: close` and no delay, and no further one is read.
    stopping: AtomicBool,
    /// The grace period is over: idle workers exit.
    finished: AtomicBool,
}

impl<R: Incoming> Workers<R> {
    pub fn new(handler: Arc<dyn Handler>, max_body_bytes: usize, read_timeout: Duration) -> Self {
        Workers {
            handler,
            max_body_bytes,
            read_timeout,
            delays: Arc::default(),
            queue: Mutex::new(Queue {
                ready: VecDeque::new(),
                idle: 0,
            }),
            queued: Condvar::new(),
            stopping: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The server is stopping: see [`Workers::stopping`]; responses held
    /// back by a delay are sent now.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.delays.stop();
    }

    /// The grace period is over: the workers exit once the queue is empty,
    /// and a request read from now on is dropped.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        // Taking the lock orders this wake-up after any worker's check of
        // `finished`, so none waits for ever.
        drop(lock(&self.queue));
        self.queued.notify_all();
    }

    /// A connection's thread: reads its requests (`requests`, tiny_http's
    /// connection) and queues each, until the connection ends or closes,
    /// or the server stops. Dropping `requests` then closes the connection.
    pub fn read<E: std::fmt::Display>(
        &self,
        conn: Arc<Connection<R>>,
        mut requests: impl Iterator<Item = Result<R, E>>,
    ) {
        while !self.stopping() {
            conn.slot.reading();
            let next = requests.next();
            conn.slot.done_reading();
            let incoming = match next {
                Some(Ok(incoming)) => incoming,
                // tiny_http answered it (400, 408, 417) and reads no more.
                Some(Err(err)) => {
                    log::debug!("connection ended: {err}");
                    return;
                }
                None => return,
            };
            let until_decided = match conn.arrive(incoming) {
                Arrival::Serve(request) => {
                    if let Some((request, _)) = self.submit((request, Arc::clone(&conn))) {
                        request.incoming.discard();
                        return;
                    }
                    conn.every_verdict
                }
                Arrival::Waits { until_decided } => until_decided,
                Arrival::Closing(incoming) => {
                    incoming.discard();
                    return;
                }
            };
            if (until_decided || conn.secure()) && !conn.ready_to_read(until_decided) {
                return;
            }
        }
    }

    /// Queues a request for the workers; gives it back once they finished.
    fn submit(&self, work: Work<R>) -> Option<Work<R>> {
        let mut queue = lock(&self.queue);
        if self.finished.load(Ordering::SeqCst) {
            return Some(work);
        }
        queue.ready.push_back(work);
        let idle = queue.idle > 0;
        drop(queue);
        if idle {
            self.queued.notify_one();
        }
        None
    }

    /// One worker: serves queued requests, each with the requests waiting
    /// behind it on its connection, until the workers finish.
    pub fn work(self: &Arc<Self>) {
        loop {
            let (request, conn) = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(work) = queue.ready.pop_front() {
                        break work;
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
            self.serve_connection(request, conn, false);
        }
    }

    /// Serves `request`, then each request read behind it on its
    /// connection, until there is none: the connection is this thread's
    /// until then. A request whose body is still on its way is handed, with
    /// the rest of the connection's turn, to a thread of its own (see the
    /// module comment), unless this is that thread.
    fn serve_connection(
        self: &Arc<Self>,
        request: Request<R>,
        conn: Arc<Connection<R>>,
        own: bool,
    ) {
        let mut next = Some(request);
        while let Some(request) = next.take() {
            if request.framing.arrives_slowly() && !own {
                let workers = Arc::clone(self);
                let spawned = std::thread::Builder::new()
                    .name("upload".into())
                    .spawn(move || workers.serve_connection(request, conn, true));
                if let Err(err) = spawned {
                    // The request is dropped unanswered, which closes its
                    // connection.
                    log::warn!("cannot start a thread for a request body: {err}");
                }
                return;
            }
            super::serve(self, request, &conn);
            next = conn.next();
        }
    }
}
