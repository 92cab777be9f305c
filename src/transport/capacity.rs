//! How many connections the server holds at once, and whether they make
//! progress.
//!
//! Each open connection costs a thread and two descriptors (tiny_http keeps
//! one for reading and one for writing). [`Capacity`] caps how many are open
//! (`--max-connections`): the accept loop takes no new connection while the
//! cap is reached, and those waiting stay in the kernel's listen queue until
//! one closes. So no flood of connections can exhaust the descriptors, and
//! the memory of the connections is bounded by the cap.
//!
//! A connection holds its [`Slot`] until it closes, and the slot says
//! what its thread is doing (`Doing`): serving a request, or waiting
//! inside the HTTP library for a request head, and since when. An honest
//! request head comes within moments of its first byte, and an idle connection is closed after the read timeout; a thread
//! that has been reading one head for far longer is **stuck**: a client
//! trickling its head a byte at a time (the library has no deadline for a
//! whole head), or a request line with `HTTP/2.0`, on which the library
//! deadlocks for good. Nothing in the library's public API can free such a
//! thread. [`Capacity::stuck`] counts them, for the server's watchdog
//! (`accept.rs`) to report and, when they hold the capacity, to give up.
//!
//! A connection that has answered a request and waits for the next head
//! is **idle** (a persistent connection, RFC 9112 section 9.3): it can be
//! closed without losing anything the client asked for (section 9.6 lets
//! either side close it at any time). [`Capacity::idlest`] picks the one
//! idle the longest, for a newcomer at the cap (as nginx reuses its
//! "reusable" connections when connections run out), and
//! [`Capacity::idle_longer_than`] those idle past `--keep-alive-timeout`;
//! `sockets.rs` closes them. A connection still waiting for its first
//! head is not idle: it may be a slow client, and the watchdog's bound
//! covers it.

use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::lock;

/// Connections allowed when the descriptor limit does not ask for fewer.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Descriptors kept for everything but connections: standard streams, the
/// listening socket, the data files, a compaction's temporary files.
pub const RESERVED_DESCRIPTORS: u64 = 32;

/// The default cap for a process that may open `descriptors` files: as
/// many connections as their two descriptors each leave room for, at most
/// [`DEFAULT_MAX_CONNECTIONS`], at least one.
pub fn default_max(descriptors: u64) -> usize {
    let room = descriptors.saturating_sub(RESERVED_DESCRIPTORS) / 2;
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .clamp(1, DEFAULT_MAX_CONNECTIONS)
}

/// The most descriptors this process may open (its soft limit).
pub fn descriptor_limit() -> u64 {
    rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
}

/// How long the stop waits for a connection that began waiting for a
/// request head just before it (see [`Capacity::wait_until_idle`]).
pub const LINGER: Duration = Duration::from_millis(500);

/// What a connection's thread is doing: the thread says so in its
/// [`Slot`] (`connection.rs`, `stream.rs`, `unread.rs`), and the accept
/// loop, the watchdog and the stop read it here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Doing {
    /// Waiting inside tiny_http for a request head, since then. With the
    /// client's address (known once the connection has answered a
    /// request), the connection is idle.
    Reading(Instant, Option<SocketAddr>),
    /// Serving a request: from the moment tiny_http hands over its head to
    /// the moment its response is written.
    Serving,
    /// Sending a stream (`/api/events`) to this client: no request in
    /// flight that the stop should wait for, and not idle.
    Streaming(Option<SocketAddr>),
    /// Closing: chosen to be closed while idle (its socket is being shut
    /// down), or its last response sent.
    Closing,
}

/// The open connections, at most `max` of them.
pub struct Capacity {
    max: usize,
    open: Mutex<Open>,
    /// Signalled when a slot is freed.
    freed: Condvar,
}

#[derive(Default)]
struct Open {
    /// What the connection of each slot in use is doing (`None` when free).
    doings: Vec<Option<Arc<Mutex<Doing>>>>,
    /// Indexes of free entries in `doings`.
    free: Vec<usize>,
    count: usize,
}

/// One open connection's place in the [`Capacity`]; dropping it frees it.
pub struct Slot {
    capacity: Arc<Capacity>,
    index: usize,
    /// What the connection's thread is doing: it sets it, the capacity
    /// reads it. Its own lock, so that connections never wait on each
    /// other to say what they do.
    pub(crate) doing: Arc<Mutex<Doing>>,
}

impl Capacity {
    pub fn new(max: usize) -> Capacity {
        Capacity {
            max: max.max(1),
            open: Mutex::default(),
            freed: Condvar::new(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// How many connections are open.
    pub fn open(&self) -> usize {
        lock(&self.open).count
    }

    /// Waits until there is room for one more connection, or an idle
    /// connection that can make room ([`Capacity::idlest`]), or `give_up`
    /// says to stop waiting (checked at least every 100 ms).
    pub fn wait_for_room(&self, give_up: impl Fn() -> bool) -> bool {
        let mut open = lock(&self.open);
        while open.count >= self.max && !open.doings.iter().flatten().any(|d| idle(d).is_some()) {
            if give_up() {
                return false;
            }
            open = self
                .freed
                .wait_timeout(open, Duration::from_millis(100))
                .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
        }
        true
    }

    /// Takes a slot for a connection just accepted, its thread about to
    /// read the first head. The accept loop waits for room first, so this
    /// may exceed the cap only by the connection accepted meanwhile (there
    /// is one accept loop).
    pub fn take(self: &Arc<Self>) -> Slot {
        let doing = Arc::new(Mutex::new(Doing::Reading(Instant::now(), None)));
        let mut open = lock(&self.open);
        open.count += 1;
        let index = match open.free.pop() {
            Some(index) => {
                open.doings[index] = Some(Arc::clone(&doing));
                index
            }
            None => {
                open.doings.push(Some(Arc::clone(&doing)));
                open.doings.len() - 1
            }
        };
        Slot {
            capacity: Arc::clone(self),
            index,
            doing,
        }
    }

    /// How many connections are serving a request now, from its head read
    /// to its response written.
    pub fn serving(&self) -> usize {
        self.count(|doing| doing == Doing::Serving)
    }

    /// Waits until no connection is serving a request, or until
    /// `deadline`; `true` if none is. A connection waiting for its next
    /// request head has nothing in flight, and is not waited for; but the
    /// library reads a head and a body of up to 1 KiB before it hands the
    /// request over, so one that began waiting less than [`LINGER`] ago
    /// may have a head in, its body still arriving: those are waited for
    /// up to [`LINGER`] from now (`tests/api/shutdown.rs`,
    /// `sigterm_answers_a_short_body_still_arriving`). A request whose
    /// head arrives just as the stop looks is seen by the second look, a
    /// moment later.
    pub fn wait_until_idle(&self, deadline: Instant) -> bool {
        let stop = Instant::now();
        let recent = |doing| matches!(doing, Doing::Reading(since, _) if stop.saturating_duration_since(since) < LINGER);
        let mut quiet_looks = 0;
        while quiet_looks < 2 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let linger = now < stop + LINGER;
            if self.count(|doing| doing == Doing::Serving || (linger && recent(doing))) == 0 {
                quiet_looks += 1;
            } else {
                quiet_looks = 0;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// How many connections have been reading one request head for longer
    /// than `after`.
    pub fn stuck(&self, after: Duration) -> usize {
        self.count(|doing| matches!(doing, Doing::Reading(since, _) if since.elapsed() > after))
    }

    /// The idle connection that has waited the longest for its next
    /// request, marked as closing: its client's address, for `sockets.rs`
    /// to close it. `None` when no connection is idle.
    pub fn idlest(&self) -> Option<SocketAddr> {
        let open = lock(&self.open);
        loop {
            let doings = open.doings.iter().flatten();
            let idles = doings.filter_map(|doing| Some((idle(doing)?, doing)));
            let ((since, peer), doing) = idles.min_by_key(|&((since, _), _)| since)?;
            let mut doing = lock(doing);
            if *doing == Doing::Reading(since, Some(peer)) {
                *doing = Doing::Closing;
                return Some(peer);
            }
            // Its request arrived meanwhile: look again.
        }
    }

    /// The idle connections that have waited longer than `after` for their
    /// next request, marked as closing: their clients' addresses.
    pub fn idle_longer_than(&self, after: Duration) -> Vec<SocketAddr> {
        let open = lock(&self.open);
        let mut closing = Vec::new();
        for doing in open.doings.iter().flatten() {
            let mut doing = lock(doing);
            if let Doing::Reading(since, Some(peer)) = *doing
                && since.elapsed() > after
            {
                *doing = Doing::Closing;
                closing.push(peer);
            }
        }
        closing
    }

    /// The clients' addresses of the connections sending a stream.
    pub fn streaming(&self) -> Vec<SocketAddr> {
        let open = lock(&self.open);
        let doings = open.doings.iter().flatten();
        doings
            .filter_map(|doing| match *lock(doing) {
                Doing::Streaming(peer) => peer,
                _ => None,
            })
            .collect()
    }

    /// How many open connections are doing `which`.
    fn count(&self, which: impl Fn(Doing) -> bool) -> usize {
        lock(&self.open)
            .doings
            .iter()
            .flatten()
            .filter(|doing| which(*lock(doing)))
            .count()
    }
}

/// Since when a connection is idle, and its client's address: it has
/// answered a request and waits for the next head.
fn idle(doing: &Mutex<Doing>) -> Option<(Instant, SocketAddr)> {
    match *lock(doing) {
        Doing::Reading(since, Some(peer)) => Some((since, peer)),
        _ => None,
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = lock(&self.capacity.open);
        open.doings[self.index] = None;
        open.free.push(self.index);
        open.count -= 1;
        drop(open);
        self.capacity.freed.notify_all();
    }
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
