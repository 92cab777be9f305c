//! The subscribers' side of the change feed: joining it, at most
//! `--max-subscribers` at once (a newcomer to a full feed waits a moment
//! for a subscriber whose client left), and reading it, each at its own
//! pace. The writers' side, and the feed's order and bounds: `feed.rs`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use super::{Entry, Feed, State};
use crate::model::{Resource, Todo};

/// How long a newcomer to a full feed waits for a place, while the
/// subscribers find whether their clients are still there: a few round
/// trips of a distant client. The newcomer's request holds its turn of
/// `--threads` meanwhile, so it is short.
pub const MAKE_ROOM_FOR: Duration = Duration::from_millis(500);

/// How often, meanwhile, each waiting subscriber writes to its client.
const PROBE_EVERY: Duration = Duration::from_millis(50);

/// After a newcomer waited [`MAKE_ROOM_FOR`] and found every subscriber
/// still there, how long the next newcomers are refused at once. With one
/// newcomer waiting at a time, a flood of newcomers to a full feed holds at
/// most one turn of `--threads`, for a fifth of the time.
const FOUND_FULL_FOR: Duration = Duration::from_secs(2);

/// The feed has its `--max-subscribers` already.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

/// What [`Subscription::wait`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// This many events, appended to the buffer given.
    Events(usize),
    /// Nothing new until the time given; or a newcomer waits for a place,
    /// and the subscriber should write something to find whether its
    /// client is still there.
    Quiet,
    /// The subscriber fell further behind than the feed keeps: the events
    /// it has not read are dropped.
    Behind,
    /// The server is stopping.
    Stopped,
}

/// What a subscriber reads, as an index: every collection (0), or one.
pub(super) fn interest(collection: Option<&str>) -> usize {
    match collection {
        None => 0,
        Some(collection) if collection == Todo::COLLECTION => 1,
        Some(_) => 2,
    }
}

/// One subscriber's place in the feed; dropping it leaves the feed.
pub struct Subscription {
    feed: Arc<Feed>,
    /// Its [`interest`].
    interest: usize,
    /// The id of the next event it reads.
    cursor: u64,
    /// The resume asked for events the feed does not hold.
    missed: bool,
    /// The last of the feed's `probes` this subscriber answered.
    probed: u64,
}

impl Feed {
    /// Waits up to [`MAKE_ROOM_FOR`] for a subscriber whose client left to
    /// free its place; [`Full`] when none did, another newcomer is already
    /// waiting, or one found the feed full less than [`FOUND_FULL_FOR`] ago.
    fn make_room<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        max: usize,
    ) -> Result<MutexGuard<'a, State>, Full> {
        let now = Instant::now();
        let found_full = state.found_full_until.is_some_and(|until| now < until);
        if max == 0 || state.making_room || found_full {
            return Err(Full);
        }
        state.making_room = true;
        let until = now + MAKE_ROOM_FOR;
        while state.subscribers >= max {
            // A subscriber whose client left is noticed only when something
            // is written to it: ask every waiting subscriber to write, and
            // again, for a client's reset answers the first write and fails
            // the second.
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                state.making_room = false;
                state.found_full_until = Some(Instant::now() + FOUND_FULL_FOR);
                return Err(Full);
            };
            state.probes += 1;
            self.arrived.notify_all();
            state = self
                .left
                .wait_timeout(state, left.min(PROBE_EVERY))
                .map_or_else(|poisoned| poisoned.into_inner().0, |(state, _)| state);
        }
        state.making_room = false;
        Ok(state)
    }

    /// Joins the feed, at most `max` subscribers at once, for the events
    /// of `collection` (every collection's without). When all `max` places
    /// are taken, it waits up to [`MAKE_ROOM_FOR`] for one whose client
    /// left to notice it and free its place. `after` is the id of
    /// the last event the subscriber has (`Last-Event-ID`): it reads the
    /// events after it that the feed still holds, or, when the feed does
    /// not hold them all, it is told so ([`Subscription::missed`]).
    /// Without `after`, it reads the events decided from now on.
    pub fn subscribe(
        self: &Arc<Self>,
        after: Option<u64>,
        max: usize,
        collection: Option<&'static str>,
    ) -> Result<Subscription, Full> {
        let mut state = self.lock();
        if state.subscribers >= max {
            state = self.make_room(state, max)?;
        }
        state.subscribers += 1;
        state.idle_since = None;
        if !self.recording.load(Ordering::Acquire) {
            // The writes made while not recording have no event: skip an
            // id, so that no id given before now is taken for one after.
            state.ring.clear();
            state.next += 1;
            state.start = state.next;
            state.decided = state.next;
            state.first = state.next;
            self.recording.store(true, Ordering::Release);
        }
        let interest = interest(collection);
        // Held: given in this recording, and no event it wants dropped since.
        let held = |id: u64| id >= state.first - 1 && id >= state.dropped[interest];
        let (cursor, missed) = match after {
            None => (state.decided, false),
            Some(id) if held(id) && id < state.decided => (id + 1, false),
            Some(_) => (state.decided, true),
        };
        let probed = state.probes;
        Ok(Subscription {
            feed: Arc::clone(self),
            interest,
            cursor,
            missed,
            probed,
        })
    }
}

impl Subscription {
    /// Whether the resume asked for events the feed no longer holds (or
    /// never held): the subscriber must read the collections again.
    pub fn missed(&self) -> bool {
        self.missed
    }

    /// The id of the last event before those it reads next.
    pub fn last(&self) -> u64 {
        self.cursor - 1
    }

    /// Waits until there are events it wants after the last read, up to
    /// `until`, and appends the bytes of up to `most` of them to `out`,
    /// stopping once `out` holds `room` bytes or more. Until `rest`,
    /// it lets events accumulate, unless a quarter of the ring has, or the
    /// writers nudge it (every quarter of the ring while some rest): a
    /// subscriber that rests a while after each read is woken a few times
    /// a second however many writes there are, and one that keeps up is
    /// never dropped behind.
    pub fn wait(
        &mut self,
        out: &mut Vec<u8>,
        (most, room): (usize, usize),
        mut rest: Instant,
        until: Instant,
    ) -> Next {
        let mut state = self.feed.lock();
        let at = self.interest;
        loop {
            if state.stopped {
                return Next::Stopped;
            }
            if self.cursor <= state.dropped[at] {
                return Next::Behind;
            }
            // Only events it does not want were dropped before the cursor.
            self.cursor = self.cursor.max(state.start);
            if state.latest[at] < self.cursor {
                // Nothing new it wants: what is decided, it need not look at.
                self.cursor = self.cursor.max(state.decided);
            }
            let now = Instant::now();
            let piled = self.cursor + state.quarter() <= state.decided;
            if self.cursor < state.decided && (now >= rest || piled) {
                let mut count = 0;
                while self.cursor < state.decided && count < most && out.len() < room {
                    let entry = &state.ring[(self.cursor - state.start) as usize];
                    if let Entry::Published(kept) = entry
                        && (at == 0 || interest(Some(kept.collection)) == at)
                    {
                        out.extend_from_slice(&kept.bytes);
                        count += 1;
                    }
                    self.cursor += 1;
                }
                return Next::Events(count);
            }
            // Events to read, but resting: until `rest`, or a nudge.
            let resting = self.cursor < state.decided;
            if !resting && state.probes != self.probed {
                self.probed = state.probes;
                return Next::Quiet;
            }
            let left = match until.checked_duration_since(now) {
                _ if resting => rest - now,
                Some(left) => left,
                None => return Next::Quiet,
            };
            match resting {
                true => state.resting += 1,
                false => state.waiting[at] += 1,
            }
            let nudges = state.nudges;
            state = self
                .feed
                .arrived
                .wait_timeout(state, left)
                .map_or_else(|poisoned| poisoned.into_inner().0, |(state, _)| state);
            match resting {
                true => state.resting -= 1,
                false => state.waiting[at] -= 1,
            }
            if resting && state.nudges != nudges {
                rest = Instant::now();
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.feed.lock();
        state.subscribers -= 1;
        if state.subscribers == 0 {
            state.idle_since = Some(Instant::now());
        }
        drop(state);
        self.feed.left.notify_all();
    }
}
