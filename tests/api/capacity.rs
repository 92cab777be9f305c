//! The connection cap, and connections stuck inside the HTTP library: the
//! server reports them on `/healthz` and, when they hold its capacity,
//! exits non-zero for a supervisor to restart it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::cli::spawn_remote;
use crate::support::{TestServer, config, problem, read_responses};

#[test]
fn connections_over_the_cap_wait_until_one_closes() {
    let mut config = config();
    config.max_connections = Some(3);
    let server = TestServer::with_config(config);
    // Three connections sending their first head, slowly: none is idle
    // (an idle one would be closed for a newcomer: `keep_alive.rs`).
    let mut held: Vec<TcpStream> = (0..3).map(|_| server.connect()).collect();
    for stream in &mut held {
        stream.write_all(b"GET /api HTTP/1.1\r\n").unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.open_connections() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.open_connections(), 3);

    // A fourth waits in the listen queue: connected, but not read.
    let mut waiting = server.connect();
    waiting
        .write_all(b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    let early = waiting.read(&mut byte);
    assert!(
        early.is_err(),
        "served over the cap: {early:?} ({} open)",
        server.open_connections()
    );
    assert_eq!(server.open_connections(), 3);

    // One closes: the waiting one is taken and served.
    drop(held.pop());
    waiting
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let responses = read_responses(&mut waiting, 1, false);
    assert_eq!(responses[0].status, 200);
    assert!(server.open_connections() <= 3);
}

fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

#[test]
fn stuck_connections_turn_healthz_503_then_the_server_exits_1() {
    // Each `HTTP/2.0` request line deadlocks a connection thread inside
    // tiny_http for good. With a 1 s read timeout a head read for over 2 s
    // is stuck; two of a cap of four are half the capacity.
    let (mut child, server) = spawn_remote(&[
        "--port",
        "0",
        "--read-timeout",
        "1",
        "--max-connections",
        "4",
        "--log-level",
        "warn",
    ]);
    let pid = child.id();
    let idle = descriptors(pid);
    let started = Instant::now();
    let mut stuck = Vec::new();
    for _ in 0..2 {
        let mut stream = server.connect();
        stream
            .write_all(b"GET /healthz HTTP/2.0\r\nHost: t\r\n\r\n")
            .unwrap();
        stuck.push(stream);
    }
    // Healthy until they count as stuck, then 503 naming the cause.
    assert_eq!(server.get("/healthz").status, 200);
    let unhealthy = loop {
        let response = server.get("/healthz");
        if response.status != 200 || started.elapsed() > Duration::from_secs(8) {
            break response;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let body = problem(&unhealthy, 503);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("2 of 4 connections are stuck"),
        "{body}"
    );
    assert!(
        descriptors(pid) <= idle + 2 * 4 + 2,
        "{} descriptors",
        descriptors(pid)
    );

    // Still stuck a read timeout later: the server gives up, exit status 1
    // and the reason on stderr.
    let deadline = started + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running after {:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1));
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("widgets-todos: ") && last.contains("stuck"),
        "{log}"
    );
    drop(stuck);
}

#[test]
fn a_bad_max_connections_exits_2_naming_the_fix() {
    let too_many = crate::cli::run(&["--max-connections", "1000000"], &[]);
    let err = String::from_utf8_lossy(&too_many.stderr);
    assert_eq!(too_many.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--max-connections") && err.contains("ulimit -n"),
        "{err}"
    );
    for bad in ["0", "many"] {
        let out = crate::cli::run(&["--max-connections", bad], &[]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--max-connections"), "{err}");
    }
    let from_env = crate::cli::run(&[], &[("MAX_CONNECTIONS", "none")]);
    assert_eq!(from_env.status.code(), Some(2));
}
