//! Responses held back by `--delay` or `_delay`, sent later by one timer
//! thread per server, so that a delayed request does not keep a worker
//! waiting: the worker handles the request at once, hands the encoded
//! response here, and moves on.
//!
//! The timer thread writes each response when it is due, in due order.
//! Each write has the connection's write timeout, so a client that does
//! not read can hold back the responses due after its own for up to that
//! long. A connection's next request is served once its delayed response
//! has been written (tiny_http answers a connection's requests in order).
//!
//! When the server stops, every response still held is due at once: a
//! write is never applied without its response being sent, however long
//! the delay asked for.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::connection::InFlight;
use super::library::Incoming;
use super::lock;
use crate::http::Response;

/// A response waiting for its time, encoded when it is sent (with that
/// moment's `Date`, and `Connection: close` if the server is stopping by
/// then).
struct Delayed<R> {
    request: R,
    reply: Response,
    head_only: bool,
    connection: Option<&'static str>,
    in_flight: InFlight<R>,
}

/// The responses a server holds back, and its timer thread.
pub(crate) struct Delays<R> {
    pending: Mutex<Pending<R>>,
    wake: Condvar,
}

impl<R> Default for Delays<R> {
    fn default() -> Self {
        Delays {
            pending: Mutex::new(Pending {
                due: BTreeMap::new(),
                arrivals: 0,
                started: false,
                stopping: false,
            }),
            wake: Condvar::new(),
        }
    }
}

struct Pending<R> {
    /// Responses by due time, then arrival (so equal times keep their
    /// order).
    due: BTreeMap<(Instant, u64), Delayed<R>>,
    /// The next arrival number.
    arrivals: u64,
    /// Whether the timer thread runs.
    started: bool,
    /// The server is stopping: everything is due now.
    stopping: bool,
}

impl<R: Incoming> Delays<R> {
    /// Sends `reply` as the response to `request` at `due` (at once when
    /// the server is stopping). `head_only` and `connection` are as for
    /// [`Response::encode`].
    pub(crate) fn send_at(
        self: &Arc<Self>,
        due: Instant,
        request: R,
        reply: Response,
        head_only: bool,
        connection: Option<&'static str>,
        in_flight: InFlight<R>,
    ) {
        let delayed = Delayed {
            request,
            reply,
            head_only,
            connection,
            in_flight,
        };
        let mut pending = lock(&self.pending);
        if !pending.started {
            let delays = Arc::clone(self);
            match std::thread::Builder::new()
                .name("delay".into())
                .spawn(move || delays.run())
            {
                Ok(_) => pending.started = true,
                Err(err) => {
                    log::error!("cannot start the delay thread ({err}); answering at once");
                    drop(pending);
                    delayed.send(false);
                    return;
                }
            }
        }
        let arrival = pending.arrivals;
        pending.arrivals += 1;
        pending.due.insert((due, arrival), delayed);
        self.wake.notify_one();
    }

    /// The server is stopping: sends every held response now, and every
    /// later one at once.
    pub fn stop(&self) {
        lock(&self.pending).stopping = true;
        self.wake.notify_one();
    }

    /// The timer thread: waits for the earliest due response, writes every
    /// response that is due, and so on; ends once the server is stopping
    /// and nothing is left.
    fn run(&self) {
        loop {
            let due = {
                let mut pending = lock(&self.pending);
                loop {
                    let now = Instant::now();
                    let first = pending.due.first_key_value().map(|(&(at, _), _)| at);
                    match first {
                        Some(_) if pending.stopping => break,
                        Some(at) if at <= now => break,
                        None if pending.stopping => {
                            pending.started = false;
                            return;
                        }
                        Some(at) => {
                            pending = self
                                .wake
                                .wait_timeout(pending, at - now)
                                .map_or_else(|poisoned| poisoned.into_inner().0, |(g, _)| g);
                        }
                        None => {
                            pending = self
                                .wake
                                .wait(pending)
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                        }
                    }
                }
                let stopping = pending.stopping;
                let due = if stopping {
                    std::mem::take(&mut pending.due)
                } else {
                    let later = pending.due.split_off(&(Instant::now(), u64::MAX));
                    std::mem::replace(&mut pending.due, later)
                };
                (due, stopping)
            };
            let (due, stopping) = due;
            for (_, delayed) in due {
                delayed.send(stopping);
            }
        }
    }
}

impl<R: Incoming> Delayed<R> {
    /// Encodes and writes the response; with `Connection: close` when the
    /// server is stopping.
    fn send(self, stopping: bool) {
        let connection = if stopping {
            Some("close")
        } else {
            self.connection
        };
        let date = super::http_date();
        let bytes = self.reply.encode(&date, self.head_only, connection);
        if let Err(err) = self.request.send(&bytes) {
            log::debug!("cannot send a delayed response: {err}");
        }
        drop(self.in_flight);
    }
}
