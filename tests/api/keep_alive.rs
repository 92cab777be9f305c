//! Persistent connections waiting for their next request (RFC 9112
//! section 9.3) hold no place that a newcomer needs: at the connection cap
//! the one idle the longest is closed for it, and any idle past
//! `--keep-alive-timeout` is closed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use widgets_todos::config::Config;

use crate::support::{TestServer, config, read_responses};

const GET: &[u8] = b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n";

/// A connection that has been answered once, and stays open.
fn answered_once(server: &TestServer) -> TcpStream {
    let mut stream = server.connect();
    stream.write_all(GET).unwrap();
    assert_eq!(read_responses(&mut stream, 1, false)[0].status, 200);
    stream
}

/// Whether the server has closed `stream`, waiting up to `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte), Ok(0))
}

#[test]
fn at_the_cap_a_newcomer_closes_the_connection_idle_the_longest() {
    let server = TestServer::with_config(Config {
        max_connections: Some(4),
        ..config()
    });
    // A slow client that has sent half a head, and three idle holders.
    let mut slow = server.connect();
    slow.write_all(b"GET /api HTTP/1.1\r\n").unwrap();
    let mut oldest = answered_once(&server);
    std::thread::sleep(Duration::from_millis(50));
    let mut holders = [answered_once(&server), answered_once(&server)];
    assert_eq!(server.open_connections(), 4);
    let asked = Instant::now();
    let health = server.get("/healthz");
    assert_eq!(health.status, 200);
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert!(
        closed_within(&mut oldest, Duration::from_secs(5)),
        "the idlest goes first"
    );
    // The slow head was not idle, nor were the others the idlest: each is
    // served.
    slow.write_all(b"Host: t\r\n\r\n").unwrap();
    for stream in std::iter::once(&mut slow).chain(&mut holders) {
        stream.write_all(GET).unwrap();
        assert_eq!(read_responses(stream, 1, false)[0].status, 200);
    }
}

#[test]
fn a_connection_idle_past_the_keep_alive_timeout_is_closed() {
    let server = TestServer::with_config(Config {
        keep_alive_timeout: Duration::from_secs(1),
        ..config()
    });
    let mut idle = answered_once(&server);
    let since = Instant::now();
    assert!(closed_within(&mut idle, Duration::from_secs(10)));
    let took = since.elapsed();
    assert!(took >= Duration::from_millis(900), "closed after {took:?}");
    // One that has not yet sent its first request is left to the read
    // timeout (30 s), as a request head may be slow.
    let mut fresh = server.connect();
    assert!(!closed_within(&mut fresh, Duration::from_secs(2)));
}
