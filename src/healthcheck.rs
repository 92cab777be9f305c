//! `widgets-todos healthcheck`: asks a running server whether it is up, so
//! that a container image without curl can check itself (`HEALTHCHECK CMD
//! widgets-todos healthcheck`). It owns a minimal HTTP/1.1 client on std's
//! `TcpStream`: one `GET /healthz`, the status line read, nothing more. The
//! whole exchange has one second (connecting included); a server that
//! takes longer is as good as down to whoever waits for it.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How long the server has to answer.
pub const LIMIT: Duration = Duration::from_secs(1);

/// The longest status line read; `HTTP/1.1 200 OK` needs 15 bytes.
const MAX_STATUS_LINE: usize = 256;

/// Asks `GET /healthz` of the server at `host:port`: `Ok` when it answers
/// 200 within [`LIMIT`], otherwise a one-line reason. A host of `0.0.0.0`
/// or `::` (a server listening on every address) is asked on loopback.
pub fn check(host: &str, port: u16) -> Result<(), String> {
    let deadline = Instant::now() + LIMIT;
    let addr = address(host, port)?;
    let url = format!("http://{addr}/healthz");
    let mut stream = TcpStream::connect_timeout(&addr, LIMIT)
        .map_err(|err| format!("cannot connect to {addr}: {err}"))?;
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .set_write_timeout(Some(left(deadline, &url)?))
        .and_then(|()| stream.write_all(request.as_bytes()))
        .map_err(|err| format!("cannot send the request to {url}: {err}"))?;

    // Read until the status line is whole, each read given only what is
    // left of the second.
    let mut received = Vec::new();
    let mut chunk = [0; MAX_STATUS_LINE];
    while !received.windows(2).any(|pair| pair == b"\r\n") {
        if received.len() >= MAX_STATUS_LINE {
            return Err(format!("{url} did not answer with an HTTP status line"));
        }
        stream
            .set_read_timeout(Some(left(deadline, &url)?))
            .map_err(|err| format!("cannot read from {url}: {err}"))?;
        let read = match stream.read(&mut chunk) {
            Ok(read) => read,
            Err(err) if is_timeout(&err) => return Err(no_answer(&url)),
            Err(err) => return Err(format!("cannot read the answer of {url}: {err}")),
        };
        if read == 0 {
            return Err(format!(
                "{url} closed the connection without an HTTP answer (is it serving HTTPS?)"
            ));
        }
        received.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&received);
    let status_line = text.lines().next().unwrap_or_default();
    // `HTTP/1.1 200 OK`: the version, the status code, the reason phrase.
    let mut parts = status_line.splitn(3, ' ');
    match (parts.next(), parts.next()) {
        (Some(version), Some("200")) if version.starts_with("HTTP/1.") => Ok(()),
        (Some(version), Some(_)) if version.starts_with("HTTP/1.") => {
            Err(format!("{url} answered '{status_line}', not 200"))
        }
        _ => Err(format!("{url} did not answer with an HTTP status line")),
    }
}

/// The address to connect to: the first `host` resolves to, with loopback
/// for the unspecified addresses (which one can listen on, not connect to).
fn address(host: &str, port: u16) -> Result<SocketAddr, String> {
    let ip = match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Ok(IpAddr::V6(ip)) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        Ok(ip) => ip,
        Err(_) => {
            let resolved = (host, port)
                .to_socket_addrs()
                .map_err(|err| format!("cannot resolve {host}: {err}"))?
                .next();
            return resolved.ok_or_else(|| format!("{host} resolves to no address"));
        }
    };
    Ok(SocketAddr::new(ip, port))
}

/// What is left of the time until `deadline`, or the error once it is over.
fn left(deadline: Instant, url: &str) -> Result<Duration, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    // A zero timeout means "wait for ever" to std.
    if left.is_zero() {
        Err(no_answer(url))
    } else {
        Ok(left)
    }
}

fn no_answer(url: &str) -> String {
    format!("{url} did not answer within {} s", LIMIT.as_secs())
}

/// A read that ran out of time: `WouldBlock` on Unix, `TimedOut` elsewhere.
fn is_timeout(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
#[path = "healthcheck_tests.rs"]
mod tests;
