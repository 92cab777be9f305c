use super::*;

/// Says that `slot`'s connection is doing `what`, as its thread does.
fn set(slot: &Slot, what: Doing) {
    *lock(&slot.doing) = what;
}

fn peer(port: u16) -> Option<SocketAddr> {
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

#[test]
fn the_default_leaves_room_in_the_descriptor_limit() {
    assert_eq!(default_max(1_048_576), DEFAULT_MAX_CONNECTIONS);
    assert_eq!(default_max(1024), 496);
    assert_eq!(default_max(64), 16);
    assert_eq!(default_max(10), 1);
}

#[test]
fn slots_are_counted_reused_and_freed() {
    let capacity = Arc::new(Capacity::new(2));
    let a = capacity.take();
    let b = capacity.take();
    assert_eq!(capacity.open(), 2);
    assert!(!capacity.wait_for_room(|| true), "full: gives up");
    drop(a);
    assert!(capacity.wait_for_room(|| true));
    let c = capacity.take();
    assert_eq!(c.index, 0, "the freed entry is reused");
    drop((b, c));
    assert_eq!(capacity.open(), 0);
}

#[test]
fn a_slot_reading_a_head_for_too_long_is_stuck() {
    let capacity = Arc::new(Capacity::new(4));
    let (a, b) = (capacity.take(), capacity.take());
    set(&b, Doing::Serving);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(capacity.stuck(Duration::ZERO), 1);
    assert_eq!(capacity.stuck(Duration::from_secs(60)), 0);
    set(&a, Doing::Serving);
    assert_eq!(capacity.stuck(Duration::ZERO), 0);
}

#[test]
fn the_stop_waits_only_for_connections_serving_a_request() {
    let capacity = Arc::new(Capacity::new(4));
    let (_idle, serving) = (capacity.take(), capacity.take());
    set(&serving, Doing::Serving);
    let soon = Instant::now() + Duration::from_millis(100);
    assert!(!capacity.wait_until_idle(soon), "a request is in flight");
    set(&serving, Doing::Reading(Instant::now(), None));
    let later = Instant::now() + Duration::from_secs(5);
    assert!(capacity.wait_until_idle(later), "only an idle connection");
}

#[test]
fn the_idlest_connection_is_closed_first_and_once() {
    let capacity = Arc::new(Capacity::new(3));
    let (fresh, older, newer) = (capacity.take(), capacity.take(), capacity.take());
    set(&older, Doing::Reading(Instant::now(), peer(1)));
    std::thread::sleep(Duration::from_millis(20));
    set(&newer, Doing::Reading(Instant::now(), peer(2)));
    assert!(capacity.wait_for_room(|| true), "full, but one can go");
    assert_eq!(capacity.idlest(), peer(1), "not the one never served");
    assert_eq!(capacity.idlest(), peer(2));
    assert_eq!(capacity.idlest(), None, "each once");
    assert_eq!(capacity.stuck(Duration::ZERO), 1, "only the fresh one");
    drop(fresh);
}

#[test]
fn connections_idle_too_long_are_closed() {
    let capacity = Arc::new(Capacity::new(3));
    let (idle, busy, streaming) = (capacity.take(), capacity.take(), capacity.take());
    set(&idle, Doing::Reading(Instant::now(), peer(1)));
    set(&busy, Doing::Serving);
    set(&streaming, Doing::Streaming(peer(3)));
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        capacity
            .idle_longer_than(Duration::from_secs(60))
            .is_empty()
    );
    let closed = capacity.idle_longer_than(Duration::from_millis(5));
    assert_eq!(closed, [SocketAddr::from(([127, 0, 0, 1], 1))]);
    assert_eq!(capacity.serving(), 1, "a stream is not in flight");
    assert_eq!(capacity.streaming().len(), 1);
}

#[test]
fn waiting_for_room_ends_when_a_slot_is_freed() {
    let capacity = Arc::new(Capacity::new(1));
    let slot = capacity.take();
    let freer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(slot);
    });
    assert!(capacity.wait_for_room(|| false));
    freer.join().unwrap();
}
