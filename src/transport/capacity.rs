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
//! A connection holds its [`Slot`] until it closes, and the slot's clock
//! says whether its thread is serving a request or waiting inside the
//! HTTP library for a request head, and since when. An honest request head comes within moments of its first
//! byte, and an idle connection is closed after the read timeout; a thread
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
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

/// A slot's clock while its connection is serving a request: between the
/// moment tiny_http hands over a head and the moment the response is
/// written. Any value below [`CLOSING`] is when the connection's thread
/// began waiting in tiny_http for the next head (milliseconds since the
/// server started).
pub(crate) const SERVING: u64 = u64::MAX;

/// A slot's clock while its connection sends a stream (`/api/events`): it
/// has no request in flight that the stop should wait for, and it is not
/// idle.
pub(crate) const STREAMING: u64 = u64::MAX - 1;

/// A slot's clock once the connection closes: chosen to be closed while
/// idle (its socket is being shut down), or its last response sent.
pub(crate) const CLOSING: u64 = u64::MAX - 2;

/// How long the stop waits for a connection that began waiting for a
/// request head just before it (see [`Capacity::wait_until_idle`]).
pub const LINGER: Duration = Duration::from_millis(500);

/// The open connections, at most `max` of them.
pub struct Capacity {
    max: usize,
    /// When the server started: slots keep time in milliseconds since.
    started: Instant,
    open: Mutex<Open>,
    /// Signalled when a slot is freed.
    freed: Condvar,
}

#[derive(Default)]
struct Open {
    /// What each slot in use says of its connection (`None` when free).
    clocks: Vec<Option<Arc<Clock>>>,
    /// Indexes of free entries in `clocks`.
    free: Vec<usize>,
    count: usize,
}

/// What a slot says of its connection: the connection's thread sets it,
/// the accept loop, the watchdog and the stop read it.
#[derive(Default)]
struct Clock {
    /// [`SERVING`], [`STREAMING`], [`CLOSING`], or since when the
    /// connection's thread waits in tiny_http for a request head.
    state: AtomicU64,
    /// The client's address, known from the first request's head: what
    /// `sockets.rs` finds the connection's socket by.
    peer: OnceLock<SocketAddr>,
}

/// One open connection's place in the [`Capacity`]; dropping it frees it.
pub struct Slot {
    capacity: Arc<Capacity>,
    index: usize,
    clock: Arc<Clock>,
    /// The capacity's `started`, for the clock.
    started: Instant,
}

impl Capacity {
    pub fn new(max: usize) -> Capacity {
        Capacity {
            max: max.max(1),
            started: Instant::now(),
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
        while open.count >= self.max && !open.clocks.iter().flatten().any(|c| c.idle()) {
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
        let clock = Arc::new(Clock {
            state: AtomicU64::new(self.now()),
            peer: OnceLock::new(),
        });
        let mut open = lock(&self.open);
        open.count += 1;
        let index = match open.free.pop() {
            Some(index) => {
                open.clocks[index] = Some(Arc::clone(&clock));
                index
            }
            None => {
                open.clocks.push(Some(Arc::clone(&clock)));
                open.clocks.len() - 1
            }
        };
        Slot {
            capacity: Arc::clone(self),
            index,
            clock,
            started: self.started,
        }
    }

    /// How many connections are serving a request now, from its head read
    /// to its response written.
    pub fn serving(&self) -> usize {
        self.count(|clock| clock == SERVING)
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
        let lingering = Instant::now() + LINGER;
        let recent = self.now().saturating_sub(LINGER.as_millis() as u64);
        let mut quiet_looks = 0;
        while quiet_looks < 2 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let linger = now < lingering;
            let waiting = |clock: u64| clock < CLOSING && clock >= recent;
            if self.count(|clock| clock == SERVING || (linger && waiting(clock))) == 0 {
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
        let now = self.now();
        let after = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        self.count(|since| since < CLOSING && now.saturating_sub(since) > after)
    }

    /// The idle connection that has waited the longest for its next
    /// request, marked as closing: its client's address, for `sockets.rs`
    /// to close it. `None` when no connection is idle.
    pub fn idlest(&self) -> Option<SocketAddr> {
        let open = lock(&self.open);
        loop {
            let clock = open
                .clocks
                .iter()
                .flatten()
                .filter(|clock| clock.idle())
                .min_by_key(|clock| clock.state.load(Ordering::SeqCst))?;
            if let Some(peer) = clock.close() {
                return Some(peer);
            }
            // Its request arrived meanwhile: look again.
        }
    }

    /// The idle connections that have waited longer than `after` for their
    /// next request, marked as closing: their clients' addresses.
    pub fn idle_longer_than(&self, after: Duration) -> Vec<SocketAddr> {
        let now = self.now();
        let after = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        let open = lock(&self.open);
        let idle = open.clocks.iter().flatten().filter(|clock| {
            clock.idle() && now.saturating_sub(clock.state.load(Ordering::SeqCst)) > after
        });
        idle.filter_map(|clock| clock.close()).collect()
    }

    /// The clients' addresses of the connections sending a stream.
    pub fn streaming(&self) -> Vec<SocketAddr> {
        let open = lock(&self.open);
        let streams = open.clocks.iter().flatten();
        let streams = streams.filter(|clock| clock.state.load(Ordering::SeqCst) == STREAMING);
        streams
            .filter_map(|clock| clock.peer.get().copied())
            .collect()
    }

    /// How many open connections' clocks say `which`.
    fn count(&self, which: impl Fn(u64) -> bool) -> usize {
        lock(&self.open)
            .clocks
            .iter()
            .flatten()
            .filter(|clock| which(clock.state.load(Ordering::SeqCst)))
            .count()
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(CLOSING - 1)
    }
}

impl Clock {
    /// Whether the connection is idle: it has answered a request (its
    /// client is known) and waits for the next head.
    fn idle(&self) -> bool {
        self.state.load(Ordering::SeqCst) < CLOSING && self.peer.get().is_some()
    }

    /// Marks an idle connection as closing, unless its next request came
    /// first: its client's address.
    fn close(&self) -> Option<SocketAddr> {
        let since = self.state.load(Ordering::SeqCst);
        let peer = *self.peer.get()?;
        let swapped = since < CLOSING
            && self
                .state
                .compare_exchange(since, CLOSING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
        swapped.then_some(peer)
    }
}

impl Slot {
    /// The connection's thread has a request head from `peer`: it serves
    /// the request.
    pub(crate) fn serving(&self, peer: Option<SocketAddr>) {
        self.clock.state.store(SERVING, Ordering::SeqCst);
        if let Some(peer) = peer {
            // The same client for every request of a connection.
            self.clock.peer.get_or_init(|| peer);
        }
    }

    /// The connection's thread sends a stream, after the response's head.
    pub(crate) fn streaming(&self) {
        self.clock.state.store(STREAMING, Ordering::SeqCst);
    }

    /// The connection closes after its response.
    pub(crate) fn closing(&self) {
        self.clock.state.store(CLOSING, Ordering::SeqCst);
    }

    /// The connection's thread waits in tiny_http for the next request head.
    pub(crate) fn waiting(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(CLOSING - 1);
        self.clock.state.store(now, Ordering::SeqCst);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = lock(&self.capacity.open);
        open.clocks[self.index] = None;
        open.free.push(self.index);
        open.count -= 1;
        drop(open);
        self.capacity.freed.notify_all();
    }
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
