use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

const FIRST: u64 = 1000;
const MAX: usize = 8;

fn feed() -> Arc<Feed> {
    Arc::new(Feed::new(FIRST))
}

fn recording(feed: &Feed) -> bool {
    feed.recording.load(Ordering::Acquire)
}

/// Publishes a create of item `item_id` in todos.
fn created(feed: &Feed, item_id: u64) -> u64 {
    created_in(feed, "todos", item_id)
}

/// Publishes a create of item `item_id` in `collection`.
fn created_in(feed: &Feed, collection: &'static str, item_id: u64) -> u64 {
    let ticket = feed.reserve();
    let id = ticket.id;
    let body = Arc::new(format!("{{\"id\":{item_id}}}").into_bytes());
    ticket.publish(Change::Created, collection, Some(item_id), Some(&body));
    id
}

/// The ids in what a feed without an encoder sends: a line per event.
fn ids(bytes: &[u8]) -> Vec<u64> {
    let text = std::str::from_utf8(bytes).unwrap();
    let id = |line: &str| line.split(' ').next().unwrap().parse().unwrap();
    text.lines().map(id).collect()
}

/// The ids of the events read now, without waiting.
fn read(subscription: &mut Subscription) -> Result<Vec<u64>, Next> {
    let mut events = Vec::new();
    match subscription.wait(
        &mut events,
        (100, usize::MAX),
        Instant::now(),
        Instant::now(),
    ) {
        Next::Events(_) | Next::Quiet => Ok(ids(&events)),
        other => Err(other),
    }
}

#[test]
fn records_only_while_someone_listens() {
    let feed = feed();
    assert!(!recording(&feed), "no subscriber: a write takes no ticket");
    let subscription = feed.subscribe(None, MAX, None).unwrap();
    assert!(recording(&feed));
    drop(subscription);
    assert!(recording(&feed), "it lingers after the last one leaves");
    feed.lock().idle_since = Some(Instant::now() - LINGER);
    created(&feed, 1);
    assert!(
        !recording(&feed),
        "the first write after the linger stops it"
    );
}

#[test]
fn events_are_read_in_id_order_once_every_earlier_one_is_decided() {
    let feed = feed();
    let mut subscription = feed.subscribe(None, MAX, None).unwrap();
    let (first, second, third) = (feed.reserve(), feed.reserve(), feed.reserve());
    let ids = [first.id, second.id, third.id];
    let body = Arc::new(b"{}".to_vec());
    second.publish(Change::Updated, "todos", Some(2), Some(&body));
    assert_eq!(
        read(&mut subscription),
        Ok(vec![]),
        "the first is undecided"
    );
    drop(first); // its write failed: cancelled
    assert_eq!(read(&mut subscription), Ok(vec![ids[1]]));
    third.publish(Change::Deleted, "widgets", Some(3), None);
    assert_eq!(read(&mut subscription), Ok(vec![ids[2]]));
}

#[test]
fn a_resume_reads_what_is_held_and_learns_what_is_not() {
    let feed = feed();
    feed.keep(3);
    let fresh = feed.subscribe(None, MAX, None).unwrap();
    let before = fresh.last();
    let ids: Vec<u64> = (1..=5).map(|n| created(&feed, n)).collect();
    // Held: the last three.
    let mut resumed = feed.subscribe(Some(ids[1]), MAX, None).unwrap();
    assert!(!resumed.missed());
    assert_eq!(read(&mut resumed), Ok(ids[2..].to_vec()));
    for after in [before, ids[0], FIRST - 5, u64::MAX, ids[4] + 1] {
        let subscription = feed.subscribe(Some(after), MAX, None).unwrap();
        assert!(subscription.missed(), "{after}");
        assert_eq!(subscription.last(), ids[4], "it goes on from the latest");
    }
    let latest = feed.subscribe(Some(ids[4]), MAX, None).unwrap();
    assert!(!latest.missed());
}

#[test]
fn a_resume_from_before_a_pause_in_recording_is_told_it_missed_events() {
    let feed = feed();
    let subscription = feed.subscribe(None, MAX, None).unwrap();
    let last = created(&feed, 1);
    drop(subscription);
    feed.lock().idle_since = Some(Instant::now() - LINGER);
    created(&feed, 2); // stops recording
    // Writes now take no ticket: the store tests `recording` first.
    let resumed = feed.subscribe(Some(last), MAX, None).unwrap();
    assert!(resumed.missed(), "writes were made that have no event");
    let fresh = feed.subscribe(None, MAX, None).unwrap();
    assert!(
        fresh.last() > last + 1,
        "the ids skip one: {}",
        fresh.last()
    );
    let again = feed.subscribe(Some(fresh.last()), MAX, None).unwrap();
    assert!(
        !again.missed(),
        "the id a fresh subscriber was given resumes"
    );
}

#[test]
fn a_subscriber_further_behind_than_the_feed_keeps_is_told() {
    let feed = feed();
    feed.keep(4);
    let mut slow = feed.subscribe(None, MAX, None).unwrap();
    for n in 1..=4 {
        created(&feed, n);
    }
    let mut partial = Vec::new();
    assert_eq!(
        slow.wait(
            &mut partial,
            (2, usize::MAX),
            Instant::now(),
            Instant::now()
        ),
        Next::Events(2)
    );
    assert_eq!(ids(&partial).len(), 2, "at most as many as asked");
    for n in 5..=7 {
        created(&feed, n);
    }
    assert_eq!(read(&mut slow), Err(Next::Behind));
    assert!(
        feed.lock().ring.len() <= 4,
        "the ring stays within its bound"
    );
}

#[test]
fn subscribers_are_capped_and_counted_out() {
    let feed = feed();
    let one = feed.subscribe(None, 2, None).unwrap();
    let two = feed.subscribe(None, 2, None).unwrap();
    assert_eq!(feed.subscribe(None, 2, None).err(), Some(Full));
    drop(one);
    let three = feed.subscribe(None, 2, None).unwrap();
    drop((two, three));
    assert_eq!(feed.lock().subscribers, 0);
}

#[test]
fn a_newcomer_to_a_full_feed_has_the_subscribers_write_until_one_leaves() {
    let feed = feed();
    let mut waiting = feed.subscribe(None, 1, None).unwrap();
    let newcomer = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || feed.subscribe(None, 1, None).is_ok())
    };
    let far = Instant::now() + Duration::from_secs(60);
    let mut buf = Vec::new();
    // Told to write (its client may have left), before any event.
    assert_eq!(
        waiting.wait(&mut buf, (8, 1 << 16), Instant::now(), far),
        Next::Quiet
    );
    drop(waiting);
    assert!(newcomer.join().unwrap(), "admitted once the place is free");
}

/// A newcomer waits for a place holding its turn of `--threads`: one at a
/// time, and none right after one found the feed full, so that a flood of
/// newcomers cannot hold every turn.
#[test]
fn newcomers_to_a_full_feed_wait_one_at_a_time_and_not_right_after_it_was_found_full() {
    let feed = feed();
    let live = feed.subscribe(None, 1, None).unwrap();
    let first = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || feed.subscribe(None, 1, None).err())
    };
    let mut looks = 0;
    while !feed.lock().making_room {
        looks += 1;
        assert!(looks < 5000, "the first newcomer never waited");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Refused without waiting: the first newcomer is still waiting.
    assert_eq!(feed.subscribe(None, 1, None).err(), Some(Full));
    assert!(feed.lock().making_room);
    // `live` never reads, so its client never fails a write: no place.
    assert_eq!(first.join().unwrap(), Some(Full));
    let probes = feed.lock().probes;
    assert_eq!(feed.subscribe(None, 1, None).err(), Some(Full));
    assert_eq!(feed.lock().probes, probes, "refused at once, no probe");
    drop(live);
    assert!(
        feed.subscribe(None, 1, None).is_ok(),
        "a free place is taken"
    );
}

#[test]
fn a_waiting_subscriber_wakes_for_a_write_and_for_the_stop() {
    let feed = feed();
    let mut subscription = feed.subscribe(None, MAX, None).unwrap();
    let writer = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || {
            while feed.lock().waiting.iter().sum::<usize>() == 0 {
                std::thread::yield_now();
            }
            created(&feed, 1)
        })
    };
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    assert_eq!(
        subscription.wait(&mut events, (10, usize::MAX), Instant::now(), until),
        Next::Events(1)
    );
    assert_eq!(ids(&events), [writer.join().unwrap()]);
    let stopper = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || {
            while feed.lock().waiting.iter().sum::<usize>() == 0 {
                std::thread::yield_now();
            }
            feed.stop();
        })
    };
    assert_eq!(
        subscription.wait(&mut events, (10, usize::MAX), Instant::now(), until),
        Next::Stopped
    );
    stopper.join().unwrap();
}

#[test]
fn a_subscriber_to_one_collection_is_not_woken_nor_dropped_for_the_other() {
    let feed = feed();
    feed.keep(4);
    let mut widgets = feed.subscribe(None, MAX, Some("widgets")).unwrap();
    let mut everything = feed.subscribe(None, MAX, None).unwrap();
    // Waiting for widgets, it is not among those a todo wakes.
    let writer = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || {
            while feed.lock().waiting[2] == 0 {
                std::thread::yield_now();
            }
            let todo = created(&feed, 1);
            assert_eq!(feed.lock().waiting[2], 1, "still waiting after a todo");
            (todo, created_in(&feed, "widgets", 1))
        })
    };
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    assert_eq!(
        widgets.wait(&mut events, (10, usize::MAX), Instant::now(), until),
        Next::Events(1)
    );
    let (todo, widget) = writer.join().unwrap();
    assert_eq!(ids(&events), [widget]);
    assert_eq!(read(&mut everything), Ok(vec![todo, widget]));
    // Many todos later the widget is dropped from the ring, and only todos
    // after it: a widgets subscriber has missed nothing.
    for n in 2..=10 {
        created(&feed, n);
    }
    assert_eq!(read(&mut widgets), Ok(vec![]), "not behind");
    let resumed = feed.subscribe(Some(widget), MAX, Some("widgets")).unwrap();
    assert!(!resumed.missed(), "every widget event after it is held");
    let all = feed.subscribe(Some(widget), MAX, None).unwrap();
    assert!(all.missed(), "todos after it were dropped");
    assert_eq!(read(&mut everything), Err(Next::Behind));
    let next = created_in(&feed, "widgets", 2);
    assert_eq!(read(&mut widgets), Ok(vec![next]));
}

#[test]
fn a_resting_subscriber_is_nudged_before_the_ring_drops_its_events() {
    use std::sync::atomic::AtomicUsize;
    const EVENTS: usize = 200;
    let feed = feed();
    feed.keep(64); // nudges every 16 events
    let mut subscription = feed.subscribe(None, MAX, None).unwrap();
    let read_so_far = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (feed, read_so_far) = (Arc::clone(&feed), Arc::clone(&read_so_far));
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            // 16 more after those read: the nudge that ends the last rest.
            for n in 0..EVENTS + 16 {
                // At most 24 unread, well within the ring: the reader, which
                // rests for 20 s after each read, must be nudged awake.
                let deadline = Instant::now() + Duration::from_secs(10);
                while ids.len() - read_so_far.load(Ordering::SeqCst) >= 24 {
                    assert!(Instant::now() < deadline, "no nudge woke the subscriber");
                    std::thread::yield_now();
                }
                ids.push(created(&feed, n as u64));
            }
            ids
        })
    };
    let mut read = Vec::new();
    while read.len() < EVENTS {
        let mut events = Vec::new();
        let asked = Instant::now();
        let later = asked + Duration::from_secs(20);
        let next = subscription.wait(&mut events, (100, usize::MAX), later, later);
        assert_eq!(next, Next::Events(ids(&events).len()));
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "woken by the rest's end"
        );
        read.extend(ids(&events));
        read_so_far.store(read.len(), Ordering::SeqCst);
    }
    assert_eq!(read[..EVENTS], writer.join().unwrap()[..EVENTS]);
}
