//! Responses held back by `--delay` or `_delay`, sent later by one timer
//! thread, so that a delayed request does not keep a worker waiting: the
//! worker handles the request at once, hands the encoded response here,
//! and moves on.
//!
//! The timer thread writes each response when it is due, in due order.
//! Each write has the connection's write timeout, so a client that does
//! not read can hold back the responses due after its own for up to that
//! long. A connection's next request is served once its delayed response
//! has been written (tiny_http answers a connection's requests in order).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

use crate::connection::{Written, lock};

/// A response waiting for its time.
struct Delayed {
    request: tiny_http::Request,
    bytes: Vec<u8>,
    written: Written,
}

/// Responses by due time, then arrival (so equal times keep their
/// order), and the next arrival number.
type Pending = (BTreeMap<(Instant, u64), Delayed>, u64);

#[derive(Default)]
struct Queue {
    pending: Mutex<Pending>,
    wake: Condvar,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

/// Sends `bytes` as the response to `request` at `due`.
pub(crate) fn send_at(due: Instant, request: tiny_http::Request, bytes: Vec<u8>, written: Written) {
    let queue = QUEUE.get_or_init(|| {
        let spawned = std::thread::Builder::new().name("delay".into()).spawn(run);
        if let Err(err) = spawned {
            log::error!("cannot start the delay thread ({err}); delayed responses wait for it");
        }
        Queue::default()
    });
    let mut pending = lock(&queue.pending);
    let arrival = pending.1;
    pending.1 += 1;
    pending.0.insert(
        (due, arrival),
        Delayed {
            request,
            bytes,
            written,
        },
    );
    queue.wake.notify_one();
}

/// The timer thread: waits for the earliest due response, writes every
/// response that is due, and so on.
fn run() {
    let queue = loop {
        // `send_at` spawns us while initializing the queue.
        match QUEUE.get() {
            Some(queue) => break queue,
            None => std::thread::yield_now(),
        }
    };
    loop {
        let due = {
            let mut pending = lock(&queue.pending);
            loop {
                let now = Instant::now();
                match pending.0.first_key_value().map(|(&(at, _), _)| at) {
                    Some(at) if at <= now => break,
                    Some(at) => {
                        pending = queue
                            .wake
                            .wait_timeout(pending, at - now)
                            .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
                    }
                    None => {
                        pending = queue
                            .wake
                            .wait(pending)
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                }
            }
            let now = Instant::now();
            let later = pending.0.split_off(&(now, u64::MAX));
            std::mem::replace(&mut pending.0, later)
        };
        for (_, delayed) in due {
            let mut writer = delayed.request.into_writer();
            if let Err(err) = writer
                .write_all(&delayed.bytes)
                .and_then(|()| writer.flush())
            {
                log::debug!("cannot send a delayed response: {err}");
            }
            drop(writer);
            drop(delayed.written);
        }
    }
}
