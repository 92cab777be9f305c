//! A response on the wire: one deadline for the whole response
//! (`--write-timeout`), and a bound on the memory that responses waiting
//! on their clients hold. Neither holds a turn of `--threads`: a client
//! that stops reading (a crashed test, a paused debugger, a phone that
//! lost its network) waits on its own.
//!
//! **The deadline.** tiny_http does not hand out its sockets, so a send
//! timeout can only be set on the listening socket, which every connection
//! inherits (`mod.rs`, `bind`), and it bounds one `send`, not a response:
//! a client reading a few bytes now and then would keep a response going
//! for as long as it likes. So the socket's send timeout is a short
//! [`TICK`], and [`write_all`] sends again after each tick that passes
//! without progress until the response's own deadline; then the
//! connection closes. A response is written within `--write-timeout`
//! plus one tick, however its client reads (`tests/api/hardening.rs`,
//! `a_response_has_one_deadline_however_slowly_it_is_read`).
//!
//! **The memory.** A response is encoded whole before it is written, so a
//! client that does not read holds its bytes until the deadline. A body of
//! up to [`SMALL`] bytes is not counted (at most that much per open
//! connection); larger ones take their size from [`Unsent`], at most
//! [`UNSENT_MAX`] bytes in all. A large response that finds no room is
//! answered 503 with `Retry-After` instead (`connection.rs`, `answer`):
//! only large responses wait on the clients that hold the room, and
//! everything else is served as usual (`tests/api/hardening.rs`,
//! `clients_that_never_read_hold_no_turn`).

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The socket's send timeout: how long one `send` may block before
/// [`write_all`] looks at the response's deadline again.
pub const TICK: Duration = Duration::from_millis(250);

/// A response body up to this size is written without taking room in
/// [`Unsent`].
pub const SMALL: usize = 16 * 1024;

/// The most the bodies of responses being written may hold at once,
/// beyond those of [`SMALL`] size: four lists of 100,000 todos as
/// `--generate` makes them (7.2 MB each).
pub const UNSENT_MAX: usize = 32 * 1024 * 1024;

/// Writes all of `bytes` and flushes them by `deadline`. A send that
/// blocks for a [`TICK`] (the socket reports it as `WouldBlock`) is tried
/// again until then; past it, the error is `TimedOut`.
pub fn write_all(out: &mut dyn Write, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) if n == bytes.len() => bytes = &[],
            // A send cut short by the tick: the client reads, but slowly.
            Ok(n) => {
                bytes = &bytes[n..];
                again(io::ErrorKind::WouldBlock.into(), deadline)?;
            }
            Err(err) => again(err, deadline)?,
        }
    }
    loop {
        match out.flush() {
            Ok(()) => return Ok(()),
            Err(err) => again(err, deadline)?,
        }
    }
}

/// `Ok` when a failed send may be tried again: it was interrupted, or it
/// blocked for a tick and the deadline has not passed.
fn again(err: io::Error, deadline: Instant) -> io::Result<()> {
    match err.kind() {
        io::ErrorKind::Interrupted => Ok(()),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if Instant::now() < deadline => Ok(()),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client read the response too slowly (--write-timeout)",
        )),
        _ => Err(err),
    }
}

/// The room for response bodies being written: see the module comment.
pub(crate) struct Unsent {
    taken: AtomicUsize,
}

/// A response's room in [`Unsent`], given back when dropped (once the
/// response is written, or its connection closed).
pub(crate) struct Room<'a> {
    unsent: &'a Unsent,
    bytes: usize,
}

impl Unsent {
    pub fn new() -> Unsent {
        Unsent {
            taken: AtomicUsize::new(0),
        }
    }

    /// Room for a body of `bytes`; `None` when there is not enough.
    pub fn take(&self, bytes: usize) -> Option<Room<'_>> {
        if bytes <= SMALL {
            return Some(Room {
                unsent: self,
                bytes: 0,
            });
        }
        let taken = self.taken.fetch_add(bytes, Ordering::Relaxed);
        if taken + bytes > UNSENT_MAX {
            self.taken.fetch_sub(bytes, Ordering::Relaxed);
            return None;
        }
        Some(Room {
            unsent: self,
            bytes,
        })
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.unsent.taken.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
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
        let err = write_all(&mut Stalled, b"x", deadline).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(50));
        let mut out = Vec::new();
        write_all(&mut out, b"abc", deadline).unwrap();
        assert_eq!(out, b"abc");
    }
}
