use super::*;

#[test]
fn large_bodies_share_the_room_and_small_ones_take_none() {
    let unsent = Unsent::new();
    let half = UNSENT_MAX / 2;
    let (a, b) = (unsent.take(half), unsent.take(half));
    assert!(a.is_some() && b.is_some());
    assert!(unsent.take(SMALL + 1).is_none(), "full");
    assert!(unsent.take(SMALL).is_some(), "a small body takes no room");
    drop(a);
    assert!(unsent.take(half).is_some(), "given back");
}

#[test]
fn a_write_that_cannot_progress_ends_at_its_deadline() {
    struct Stalled;
    impl Write for Stalled {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            std::thread::sleep(Duration::from_millis(5));
            Err(io::ErrorKind::WouldBlock.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let started = Instant::now();
    let deadline = started + Duration::from_millis(50);
    let err = write_all(&mut Stalled, &[b"x"], deadline).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert!(started.elapsed() >= Duration::from_millis(50));
    let mut out = Vec::new();
    write_all(&mut out, &[b"ab", b"c"], deadline).unwrap();
    assert_eq!(out, b"abc");
}
