//! The turns of `--threads` are held only while the server works: every
//! request's handler takes one, whatever its framing, and none is held
//! while a client reads its response, which has one deadline for the
//! whole of it (`--write-timeout`). The figures at full scale (100,000
//! todos, RSS) are measured by scripts/abuse.py.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use widgets_todos::http::{Body, JSON, Request, Response};
use widgets_todos::transport::{self, Server};

use crate::support::{IO_TIMEOUT, Remote, read_responses};

/// A running server over `handler` with `threads` turns and the given
/// write timeout; stopped when dropped.
struct Serving(Option<Server>, Remote);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(server) = self.0.take() {
            server.stopper().stop();
        }
    }
}

fn serve(
    threads: usize,
    write_timeout: Duration,
    handler: impl Fn(&mut Request<'_>) -> Response + Send + Sync + 'static,
) -> Serving {
    let settings = transport::Settings {
        threads,
        max_body_bytes: 65536,
        read_timeout: Duration::from_secs(10),
        write_timeout,
        keep_alive_timeout: Duration::from_secs(10),
        max_connections: Some(64),
        tls: None,
        access_log: true,
    };
    let listener = transport::bind("127.0.0.1", 0, &settings).unwrap();
    let server = Server::start(listener, &settings, Arc::new(handler), Arc::default()).unwrap();
    let remote = Remote(server.addr());
    Serving(Some(server), remote)
}

/// `/big` is `size` bytes of JSON; anything else a small 200.
fn big_or_small(size: usize) -> impl Fn(&mut Request<'_>) -> Response + Send + Sync + 'static {
    move |request: &mut Request<'_>| {
        if request.path() == "/big" {
            let mut bytes = vec![b' '; size];
            bytes[0] = b'0';
            Response::bytes(200, JSON, Body::Owned(bytes))
        } else {
            Response::bytes(200, JSON, Body::Owned(b"{}".to_vec()))
        }
    }
}

/// A connection with a small receive buffer, so that the server's writes
/// block as soon as the client stops reading.
fn never_reading(remote: &Remote, request: &str) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&remote.0.into()).unwrap();
    let mut stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

#[test]
fn clients_that_never_read_hold_no_turn() {
    // A response whose write blocked kept its turn, so
    // two clients that never read froze every other request for about
    // three write timeouts.
    let server = serve(2, Duration::from_secs(30), big_or_small(8 << 20));
    let stalled: Vec<TcpStream> = (0..3)
        .map(|_| never_reading(&server.1, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    for _ in 0..3 {
        assert_eq!(server.1.get("/healthz").status, 200);
    }
    // Generous for a loaded machine; the figure (within 1 s) is
    // scripts/abuse.py's.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    drop(stalled);
}

#[test]
fn a_response_has_one_deadline_however_slowly_it_is_read() {
    // The write timeout bounded each send, so a client
    // reading a little now and then kept a response going for as long as
    // it liked.
    let size = 16 << 20;
    let server = serve(2, Duration::from_secs(1), big_or_small(size));
    let mut slow = never_reading(&server.1, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
    let started = Instant::now();
    let (mut got, mut buf) = (0, vec![0; 16384]);
    // About 3 MB/s: the whole response would take some 5 s.
    let ended = loop {
        if started.elapsed() > Duration::from_secs(30) {
            break false;
        }
        match slow.read(&mut buf) {
            Ok(0) | Err(_) => break true,
            Ok(n) => got += n,
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(ended, "still sending after {:?}", started.elapsed());
    // The server stopped after 1 s (and a tick); what the kernel had
    // taken by then still arrives.
    assert!(got < size, "the whole response arrived: {got} bytes");
}

#[test]
fn every_framing_takes_a_turn() {
    // A request with `Transfer-Encoding: chunked`,
    // `Connection: upgrade` or `Expect: 100-continue` took no turn, for
    // its handler nor its response.
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let handler = {
        let (now, most) = (Arc::clone(&now), Arc::clone(&most));
        move |_: &mut Request<'_>| {
            let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(at_once, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(150));
            now.fetch_sub(1, Ordering::SeqCst);
            Response::bytes(200, JSON, Body::Owned(b"{}".to_vec()))
        }
    };
    let server = serve(1, Duration::from_secs(10), handler);
    for framing in [
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n",
        "Expect: 100-continue\r\nContent-Length: 0\r\n\r\n",
    ] {
        most.store(0, Ordering::SeqCst);
        let mut clients: Vec<TcpStream> = (0..4)
            .map(|_| {
                let mut stream = server.1.connect();
                let request = format!("GET /api/todos HTTP/1.1\r\nHost: t\r\n{framing}");
                stream.write_all(request.as_bytes()).unwrap();
                stream
            })
            .collect();
        for stream in &mut clients {
            assert_eq!(read_responses(stream, 1, false)[0].status, 200);
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "{framing:?}");
    }
}
