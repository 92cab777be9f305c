//! The change feed's memory: every write the store acknowledges, as an
//! [`Event`] numbered in the order of the writes, kept for the subscribers
//! of `/api/events` (`app/events.rs` sends them as server-sent events).
//!
//! # Order, and durability
//!
//! A write takes its event's id (a [`Ticket`]) under its collection's
//! lock, as the last step of the change, so the ids follow the order of
//! the writes. With `--data`, a write is acknowledged only once durable
//! (`Store::commit`), after the lock, and two writers can get there in
//! either order. So a ticket is published after the commit, or cancelled
//! when the write fails and is taken back (dropping a ticket unpublished
//! cancels it), and subscribers read only the ids up to the first one
//! still undecided. An event is thus sent only once its write is
//! acknowledged, and never before an earlier write's.
//!
//! # Bounds
//!
//! The feed keeps the last `--events-kept` decided events (older ones are
//! dropped as new ones come), plus those still undecided: at most one per
//! write in flight. An event is kept as its subscribers send it, made
//! once when it is published (by the encoder the application gives,
//! [`Feed::encode_with`]): a few words and the item's JSON, the bytes of
//! the write's response; each subscriber copies them. Writers never wait for
//! subscribers: they append under a short lock, and wake subscribers only
//! when one waits for that collection's events. Each subscriber reads at
//! its own pace; one that has not read an event the feed then dropped is
//! told so ([`Next::Behind`]). A subscriber to one collection costs the
//! writes to the other nothing: it is not woken for them, and skips them
//! without looking.
//!
//! # Recording
//!
//! The feed costs a write nothing while no one listens: `recording` is off,
//! and the store takes no ticket (one test of an atomic flag). It is on
//! while a subscriber is connected, and for [`LINGER`] after the last one
//! leaves, so that a subscriber that reconnects resumes where it was. When
//! recording starts again, the writes made meanwhile have no event: the
//! ids skip one, and a resume from an id before the skip is told that
//! events were missed ([`Subscription::missed`]), never given a silent
//! gap.
//!
//! # Ids
//!
//! The first id is the time the server started, in microseconds since
//! 1970, plus one: ids grow from one run to the next too, so an id from an
//! earlier run is never mistaken for one of this run. They stay below
//! 2^53 (JavaScript's exact integers) until the year 2255.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// How long the feed keeps recording after the last subscriber leaves.
pub const LINGER: Duration = Duration::from_secs(30);

/// `--events-kept`, by default.
pub const DEFAULT_KEPT: usize = 1024;

/// What a write did, as one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Created,
    Updated,
    Deleted,
    /// A collection emptied (`--allow-reset`), or replaced by an edit of
    /// the data file (`--watch`): read it again.
    Reset,
}

impl Change {
    /// The event's name, its `event:` field.
    pub fn name(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Updated => "updated",
            Change::Deleted => "deleted",
            Change::Reset => "reset",
        }
    }
}

/// One acknowledged write, as the encoder sees it.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// The event's id: only grows.
    pub id: u64,
    pub change: Change,
    /// `todos` or `widgets`.
    pub collection: &'static str,
    /// The item's id; none for a reset.
    pub item_id: Option<u64>,
    /// The item's JSON as a GET returns it, for a create or an update.
    pub item: Option<&'a [u8]>,
}

/// How the application sends an event: its bytes on the wire.
pub type Encode = fn(&Event<'_>) -> Vec<u8>;

/// The encoder of a feed no one gave one: the id and the collection, a
/// line each event.
fn plain(event: &Event<'_>) -> Vec<u8> {
    format!("{} {}\n", event.id, event.collection).into_bytes()
}

/// An event as the ring keeps it.
struct Kept {
    id: u64,
    collection: &'static str,
    /// As the subscribers send it ([`Encode`]).
    bytes: Vec<u8>,
}

/// The events of the writes, for the subscribers.
pub struct Feed {
    /// Whether writes take tickets. The store reads it without a lock, on
    /// every write; it changes under `state`'s.
    pub(super) recording: AtomicBool,
    state: Mutex<State>,
    /// Signalled when more events are decided, the feed stops, or a
    /// newcomer asks the subscribers to write (`probes`).
    arrived: Condvar,
    /// Signalled when a subscriber leaves.
    left: Condvar,
    /// How events are encoded ([`Feed::encode_with`]).
    encode: OnceLock<Encode>,
}

/// The feed's state, under `Feed::state`.
struct State {
    /// The entries of ids `start..next`, oldest first.
    ring: VecDeque<Entry>,
    start: u64,
    /// The id the next ticket gets.
    next: u64,
    /// Every id below this one is decided: published or cancelled.
    decided: u64,
    /// How many decided events are kept (`--events-kept`).
    kept: usize,
    subscribers: usize,
    /// Since when no subscriber is connected, while recording lingers.
    idle_since: Option<Instant>,
    /// The first id of this recording (see the module comment).
    first: u64,
    /// Per [`interest`]: subscribers waiting on `arrived` (none, and a
    /// write wakes nobody), the last event published, and the last event
    /// dropped from the ring.
    waiting: [usize; 3],
    latest: [u64; 3],
    dropped: [u64; 3],
    /// Subscribers resting with events to read (see [`Subscription::wait`]),
    /// `decided` when they were last nudged, and how many nudges so far.
    resting: usize,
    nudged: u64,
    nudges: u64,
    /// The server is stopping: every stream ends.
    stopped: bool,
    /// Raised by a subscriber that finds every place taken: each waiting
    /// subscriber then writes to its client (see [`Feed::subscribe`]).
    probes: u64,
    /// A newcomer is waiting for a place; until when newcomers are refused
    /// at once, the last one having found every subscriber there.
    making_room: bool,
    found_full_until: Option<Instant>,
}

enum Entry {
    /// A write holds the ticket: not yet acknowledged, nor failed.
    Pending,
    Cancelled,
    Published(Kept),
}

/// The right, and the duty, to publish one event: taken under a
/// collection's lock, published once the write is acknowledged. Dropped
/// unpublished (the write failed), it cancels its id.
pub struct Ticket<'a> {
    feed: Option<&'a Feed>,
    id: u64,
}

impl State {
    /// A quarter of the events kept, at least one.
    fn quarter(&self) -> u64 {
        (self.kept as u64 / 4).max(1)
    }
}

impl Default for Feed {
    fn default() -> Feed {
        Feed::new(first_id())
    }
}

/// The first id of this run: see the module comment.
fn first_id() -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(0) + 1
}

impl Feed {
    /// A feed whose ids start at `first`, not recording.
    pub fn new(first: u64) -> Feed {
        Feed {
            recording: AtomicBool::new(false),
            state: Mutex::new(State {
                ring: VecDeque::new(),
                start: first,
                next: first,
                decided: first,
                kept: DEFAULT_KEPT,
                subscribers: 0,
                idle_since: None,
                first,
                waiting: [0; 3],
                latest: [0; 3],
                dropped: [0; 3],
                resting: 0,
                nudged: first,
                nudges: 0,
                stopped: false,
                probes: 0,
                making_room: false,
                found_full_until: None,
            }),
            arrived: Condvar::new(),
            left: Condvar::new(),
            encode: OnceLock::new(),
        }
    }

    /// How each event is to be sent: encoded once, when it is published,
    /// for every subscriber. The first encoder given stays.
    pub fn encode_with(&self, encode: Encode) {
        if self.encode.set(encode).is_err() {
            log::debug!("the feed's encoder is set already");
        }
    }

    /// Nothing a panic could leave half done is under this lock: each
    /// change is a push, a pop or an assignment.
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::error::lock(&self.state)
    }

    /// Keeps the last `kept` decided events (`--events-kept`), at least one.
    pub fn keep(&self, kept: usize) {
        self.lock().kept = kept.max(1);
    }

    /// The next id, for a write being made: call it under the write's
    /// collection lock, once the change is made, and only while
    /// `recording` (the store's write path tests the flag inline).
    pub fn reserve(&self) -> Ticket<'_> {
        let mut state = self.lock();
        let id = state.next;
        state.next += 1;
        state.ring.push_back(Entry::Pending);
        Ticket {
            feed: Some(self),
            id,
        }
    }

    /// Publishes or cancels the id of a ticket; see the module comment.
    fn decide(&self, id: u64, event: Option<Kept>) {
        let mut state = self.lock();
        // Recording stopped and started again since the ticket was taken.
        let Some(at) = id.checked_sub(state.start) else {
            return;
        };
        if let Some(entry) = state.ring.get_mut(at as usize) {
            *entry = event.map_or(Entry::Cancelled, Entry::Published);
        }
        // Which interests have new events, to wake only their waiters.
        let mut new = [false; 3];
        while let Some(entry) = state.ring.get((state.decided - state.start) as usize)
            && !matches!(entry, Entry::Pending)
        {
            if let Entry::Published(event) = entry {
                let (id, one) = (event.id, interest(Some(event.collection)));
                for at in [0, one] {
                    state.latest[at] = id;
                    new[at] = true;
                }
            }
            state.decided += 1;
        }
        while state.decided - state.start > state.kept as u64 {
            if let Some(Entry::Published(event)) = state.ring.pop_front() {
                state.dropped[0] = event.id;
                state.dropped[interest(Some(event.collection))] = event.id;
            }
            state.start += 1;
        }
        if state.subscribers == 0 && state.idle_since.is_some_and(|t| t.elapsed() >= LINGER) {
            // No one has listened for a while: stop recording.
            self.recording.store(false, Ordering::Release);
            state.idle_since = None;
            state.ring.clear();
            state.start = state.next;
            state.decided = state.next;
        }
        // Resting subscribers are nudged every quarter of the ring, so that
        // one that keeps up is never dropped behind, whatever the pace.
        let nudge = state.resting > 0 && state.decided >= state.nudged + state.quarter();
        if nudge {
            state.nudged = state.decided;
            state.nudges += 1;
        }
        let wake = nudge || (0..3).any(|at| new[at] && state.waiting[at] > 0);
        drop(state);
        if wake {
            self.arrived.notify_all();
        }
    }

    /// How many tickets are taken and not yet published or cancelled.
    #[cfg(test)]
    pub fn undecided(&self) -> u64 {
        let state = self.lock();
        state.next - state.decided
    }

    /// Ends every stream: the server is stopping.
    pub fn stop(&self) {
        self.lock().stopped = true;
        self.arrived.notify_all();
    }
}

impl Ticket<'_> {
    /// Publishes the event of an acknowledged write, encoded here, on the
    /// writer's thread, outside every lock.
    pub fn publish(
        mut self,
        change: Change,
        collection: &'static str,
        item_id: Option<u64>,
        item: Option<&[u8]>,
    ) {
        if let Some(feed) = self.feed.take() {
            let event = Event {
                id: self.id,
                change,
                collection,
                item_id,
                item,
            };
            let encode = feed.encode.get().copied().unwrap_or(plain);
            let bytes = encode(&event);
            let kept = Kept {
                id: self.id,
                collection,
                bytes,
            };
            feed.decide(self.id, Some(kept));
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if let Some(feed) = self.feed.take() {
            feed.decide(self.id, None);
        }
    }
}

mod subscribers;

use subscribers::interest;
pub use subscribers::{Full, MAKE_ROOM_FOR, Next, Subscription};

#[cfg(test)]
#[path = "feed_tests.rs"]
mod tests;
