//! Closing a connection from another thread than the one reading it: a
//! workaround for the HTTP library, off the normal path.
//!
//! tiny_http does not hand out its sockets, and its connection's thread
//! waits for the next request head in a blocking read that nothing in its
//! API can interrupt. So to close an idle connection (for a newcomer at
//! the cap, or past `--keep-alive-timeout`, see `capacity.rs`), or a stream
//! that is still writing when the server stops, [`shut_down`] finds the
//! server's socket by its client's address among the process's open
//! descriptors (`/proc/self/fd`) and shuts it down in both directions
//! (`shutdown(2)`): the client gets a FIN, the blocked read returns the end
//! of the stream, a blocked write fails, and the connection's thread ends
//! as when a client leaves. Only a socket whose local port is the
//! server's and whose peer is one of the clients given is touched; the
//! other ones, and every descriptor that is not a socket, are left alone.
//! (`tests/api/keep_alive.rs`.)
//!
//! The look-up reads every descriptor, so it costs about a microsecond per
//! open connection; it runs only when a connection must be closed, never
//! on a request's path. Where `/proc` is missing (not Linux), nothing is
//! closed and the caller logs why.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use nix::sys::socket::{Shutdown, SockaddrStorage, getpeername, getsockname, shutdown};

/// Shuts down the sockets on `port` (the server's) whose clients are in
/// `peers`: how many descriptors were (tiny_http holds two a connection).
pub(super) fn shut_down(peers: &[SocketAddr], port: u16) -> io::Result<usize> {
    if peers.is_empty() {
        return Ok(0);
    }
    let mut found = 0;
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let name = entry?.file_name();
        let Some(fd) = name.to_str().and_then(|n| n.parse::<RawFd>().ok()) else {
            continue;
        };
        // Not a connected socket (a file, the listening socket, this very
        // directory): skipped.
        let Some(peer) = address(getpeername(fd)) else {
            continue;
        };
        if !peers.contains(&peer) || address(getsockname(fd)).map(|a| a.port()) != Some(port) {
            continue;
        }
        match shutdown(fd, Shutdown::Both) {
            Ok(()) => found += 1,
            Err(err) => log::debug!("cannot shut down the connection of {peer}: {err}"),
        }
    }
    Ok(found)
}

/// A socket address as std has it; `None` for another family, or an error.
fn address(found: nix::Result<SockaddrStorage>) -> Option<SocketAddr> {
    let found = found.ok()?;
    if let Some(v4) = found.as_sockaddr_in() {
        return Some(SocketAddr::from(*v4));
    }
    found.as_sockaddr_in6().map(|v6| SocketAddr::from(*v6))
}
