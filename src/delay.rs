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
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::connection::{Written, http_date, lock};
use crate::response::Reply;

/// A response waiting for its time, encoded when it is sent (with that
/// moment's `Date`, and `Connection: close` if the server is stopping by
/// then).
struct Delayed {
    request: tiny_http::Request,
    reply: Reply,
    head_only: bool,
    connection: Option<&'static str>,
    written: Written,
}

/// The responses a server holds back, and its timer thread.
#[derive(Default)]
pub struct Delays {
    pending: Mutex<Pending>,
    wake: Condvar,
}

#[derive(Default)]
struct Pending {
    /// Responses by due time, then arrival (so equal times keep their
    /// order).
    due: BTreeMap<(Instant, u64), Delayed>,
    /// The next arrival number.
    arrivals: u64,
    /// Whether the timer thread runs.
    started: bool,
    /// The server is stopping: everything is due now.
    stopping: bool,
}

impl Delays {
    /// Sends `reply` as the response to `request` at `due` (at once when
    /// the server is stopping). `head_only` and `connection` are as for
    /// [`Reply::encode`].
    pub(crate) fn send_at(
        self: &Arc<Self>,
        due: Instant,
        request: tiny_http::Request,
        reply: Reply,
        head_only: bool,
        connection: Option<&'static str>,
        written: Written,
    ) {
        let delayed = Delayed {
            request,
            reply,
            head_only,
            connection,
            written,
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

impl Delayed {
    /// Encodes and writes the response; with `Connection: close` when the
    /// server is stopping.
    fn send(self, stopping: bool) {
        let connection = if stopping {
            Some("close")
        } else {
            self.connection
        };
        let bytes = self.reply.encode(&http_date(), self.head_only, connection);
        let mut writer = self.request.into_writer();
        if let Err(err) = writer.write_all(&bytes).and_then(|()| writer.flush()) {
            log::debug!("cannot send a delayed response: {err}");
        }
        drop(writer);
        drop(self.written);
    }
}
