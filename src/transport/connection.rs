//! One connection's requests, served one at a time and in order.
//!
//! HTTP/1.1 lets a client pipeline: send requests without waiting for the
//! responses, which the server must send in the order of the requests
//! (RFC 9112 section 9.3.2). tiny_http writes them in that order whatever
//! we do, so a second worker serving the same connection would only wait
//! for the first; a client that pipelines and never reads its responses
//! would then hold every worker. So a connection is served by one worker at
//! a time: a request read while its connection's previous one is being
//! served waits for that worker, which serves it next (with no wake-up:
//! without pipelining, the next request often arrives while the worker is
//! still finishing). At most one request waits: the connection's thread
//! reads no further until the worker takes it, and the rest stays in the
//! client's socket buffer.
//!
//! **Closing.** After ambiguous framing, a body that stopped arriving or
//! was refused unread, or a write that failed, nothing more is served on the
//! connection: its response says `Connection: close`, and a request read
//! behind it is dropped unanswered. Such a request has a body, so the
//! connection's thread, having read the next request behind it, waits
//! until the worker knows, and ends the connection at once if it closes.
//!
//! A request the handler leaves unanswered (`_fault=close`) closes the
//! connection too, without a byte written, and needs no body: tiny_http
//! holds the socket, and closes it only once the connection's thread lets
//! go, which it does not while it waits in tiny_http for a next request
//! the client, waiting for an answer, never sends. So when that may happen
//! ([`Connection::every_verdict`], `--faults` only), the thread waits for
//! the verdict on every request before it reads again, and the client sees
//! the connection close at once (`tests/api/faults.rs`). Otherwise the
//! thread reads ahead as before, and pays nothing for it.
//!
//! **TLS.** tiny_http's TLS stream is one lock for reading and writing, so
//! a thread waiting to read the next request would keep the response from
//! being written: over TLS, the thread reads again only once every response
//! is written.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::body::Framing;
use super::capacity::Slot;
use super::library::Incoming;
use super::lock;

/// A connection, shared by its thread and the worker serving it.
pub(crate) struct Connection<R> {
    state: Mutex<State<R>>,
    /// Signalled, while the connection's thread waits, when the waiting
    /// request is taken, a verdict is reached, or a response is sent.
    changed: Condvar,
    secure: bool,
    /// The connection's thread waits for the verdict on every request, not
    /// only on one with a body (see "Closing" above).
    pub every_verdict: bool,
    /// The connection's place in the server's capacity, held until its
    /// thread is done and its last response is sent.
    pub slot: Slot,
}

struct State<R> {
    /// A worker is serving one of this connection's requests.
    serving: bool,
    /// The request being served has a body, and its worker does not know
    /// yet whether the connection closes after it.
    undecided: bool,
    /// The request read behind the one being served.
    next: Option<Request<R>>,
    /// Nothing more is served on this connection.
    closing: bool,
    /// Requests whose response is not sent yet (counted over TLS only).
    unsent: usize,
    /// The connection's thread waits on `changed`.
    reader_waits: bool,
}

/// A request read from a connection, with what its header fields say of
/// its body, and its [`InFlight`] mark.
pub(crate) struct Request<R> {
    pub incoming: R,
    pub framing: Framing,
    pub in_flight: InFlight<R>,
}

/// Held with a request until its response is sent or it is dropped: it
/// keeps its connection's slot, and over TLS its drop lets the
/// connection's thread read again.
pub(crate) struct InFlight<R>(Arc<Connection<R>>);

impl<R> Drop for InFlight<R> {
    fn drop(&mut self) {
        let conn = &self.0;
        if conn.secure {
            let mut state = lock(&conn.state);
            state.unsent -= 1;
            if state.unsent == 0 && state.reader_waits {
                conn.changed.notify_all();
            }
        }
    }
}

/// What becomes of a request read from a connection.
pub(crate) enum Arrival<R> {
    /// For a worker now.
    Serve(Request<R>),
    /// Waiting for the worker serving its connection. `until_decided` when
    /// the request being served may yet close the connection.
    Waits { until_decided: bool },
    /// The connection is closing: drop the request, and the connection.
    Closing(R),
}

impl<R: Incoming> Connection<R> {
    pub fn new(secure: bool, slot: Slot, every_verdict: bool) -> Connection<R> {
        Connection {
            state: Mutex::new(State {
                serving: false,
                undecided: false,
                next: None,
                closing: false,
                unsent: 0,
                reader_waits: false,
            }),
            changed: Condvar::new(),
            secure,
            every_verdict,
            slot,
        }
    }

    /// A request read from the connection. If one already waits, first
    /// waits until the worker takes it.
    pub fn arrive(self: &Arc<Self>, incoming: R) -> Arrival<R> {
        let framing = Framing::of(&incoming);
        let mut state = self.wait(lock(&self.state), |s| s.next.is_some() && !s.closing);
        if state.closing {
            return Arrival::Closing(incoming);
        }
        if self.secure {
            state.unsent += 1;
        }
        let request = Request {
            incoming,
            framing,
            in_flight: InFlight(Arc::clone(self)),
        };
        if state.serving {
            let until_decided = state.undecided || self.every_verdict;
            state.next = Some(request);
            return Arrival::Waits { until_decided };
        }
        state.serving = true;
        state.undecided = self.closes_only_by_verdict(&framing);
        Arrival::Serve(request)
    }

    /// The request waiting behind the one just served, or `None`, the
    /// connection then being free for the next worker. A request waiting
    /// on a closing connection is dropped unanswered.
    pub fn next(&self) -> Option<Request<R>> {
        let mut state = lock(&self.state);
        let next = state.next.take();
        if state.reader_waits {
            self.changed.notify_all();
        }
        match next {
            Some(next) if !state.closing => {
                state.undecided = self.closes_only_by_verdict(&next.framing);
                Some(next)
            }
            next => {
                state.serving = false;
                drop(state);
                // Outside the lock: dropping may read the rest of a body.
                if let Some(next) = next {
                    next.incoming.discard();
                }
                None
            }
        }
    }

    /// The worker knows whether the connection closes after the request it
    /// serves (only a failed write can change that now).
    pub fn decided(&self, close: bool) {
        let mut state = lock(&self.state);
        state.closing |= close;
        state.undecided = false;
        if state.reader_waits {
            self.changed.notify_all();
        }
    }

    /// Nothing more is served: a write failed.
    pub fn close(&self) {
        lock(&self.state).closing = true;
    }

    /// Before the connection's thread reads again: waits, if the request
    /// just read waits behind one that may close the connection, for its
    /// verdict (with `every_verdict`, also for the verdict on the request
    /// just read, waiting or not); and over TLS until every response is
    /// sent. `false` if the connection is closing.
    pub fn ready_to_read(&self, until_decided: bool) -> bool {
        let state = self.wait(lock(&self.state), |s| {
            // With `every_verdict`, the request just read waits for its
            // own verdict too, from the moment it is queued behind another.
            let undecided = s.undecided || (self.every_verdict && s.next.is_some());
            (until_decided && s.serving && undecided) || s.unsent > 0
        });
        !state.closing
    }

    /// Waits on `changed` while `blocked` says so.
    fn wait<'a>(
        &self,
        mut state: MutexGuard<'a, State<R>>,
        blocked: impl Fn(&State<R>) -> bool,
    ) -> MutexGuard<'a, State<R>> {
        while blocked(&state) {
            state.reader_waits = true;
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.reader_waits = false;
        state
    }

    /// Whether the worker serving this request must decide before the
    /// connection's thread may read past it: it has a body, or (with
    /// `every_verdict`) any request may be left unanswered.
    fn closes_only_by_verdict(&self, framing: &Framing) -> bool {
        framing.has_body() || self.every_verdict
    }

    pub fn secure(&self) -> bool {
        self.secure
    }
}
