//! The access log: one line per request on stderr, written in batches.
//!
//! Everything else the server logs goes through `log` (`logging.rs`),
//! which writes each line to stderr as it comes. One line per request that
//! way cost a third of the throughput (scripts/PERFORMANCE.md). So access
//! lines, in the same format, go into a
//! buffer instead, and a thread writes the buffer out every
//! [`FLUSH_EVERY`], or sooner when it fills. The price: a line reaches
//! stderr up to that late, and a `kill -9` loses the last
//! [`FLUSH_EVERY`] of lines. `main` flushes before it exits.
//!
//! The log is on when `log` would print `info` lines (`--log-level info`
//! or more), so it follows the same flag; the lines of `/healthz`, which
//! health probes ask every few seconds, only at `debug`.
//!
//! The method and the target are the client's bytes. A control character
//! among them (ESC, which drives a terminal; VT, FF, CR, which many tools
//! take for a line break) is written escaped, `\x1b`, and so is `\`,
//! `\x5c`, so that an escape in the log always means one: no client can
//! forge a line or paint the operator's terminal.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use super::lock;
use crate::http::TIMESTAMP;
use crate::logging::LOG;
use time::OffsetDateTime;

/// How often buffered lines are written out.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Written out at once past this many bytes, without waiting for the thread.
const HIGH_WATER: usize = 64 * 1024;

static BUFFER: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();

/// Whether access lines are logged at all.
pub fn enabled() -> bool {
    log::log_enabled!(target: "widgets_todos::transport", log::Level::Info)
}

/// One request, as its access line tells it.
pub struct Line<'a> {
    pub remote: Option<SocketAddr>,
    pub method: &'a str,
    pub target: &'a str,
    pub status: u16,
    /// A health probe's (`Response::probe`): the line is at `debug`.
    pub probe: bool,
    /// Bytes sent, head and body (the line says `head+body=`, as the
    /// request journal's `size` counts the body alone).
    pub bytes: usize,
    /// From the request's start to its response written.
    pub elapsed: Duration,
    /// The request's id, as its response's `X-Request-Id` carries it.
    pub id: &'a str,
}

/// Adds one line, after the same timestamp and level as `logging.rs`
/// writes: `<time> INFO  127.0.0.1:50000 GET /api/todos 200 head+body=312B
/// 0.041ms id=3f9a0c12e4b7-1`. The id comes last, so the fields before it
/// keep their places. A health probe's line is at `debug`.
pub fn record(line: Line<'_>) {
    let level = if line.probe {
        log::Level::Debug
    } else {
        log::Level::Info
    };
    if !log::log_enabled!(target: "widgets_todos::transport", level) {
        return;
    }
    let buffer = BUFFER.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("access-log".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(FLUSH_EVERY);
                    flush();
                }
            });
        if let Err(err) = spawned {
            log::warn!(target: crate::logging::LOG, "cannot start the access log thread ({err}); lines wait for a full buffer");
        }
        Mutex::new(Vec::with_capacity(HIGH_WATER))
    });
    let now = SystemTime::now();
    let full = {
        let mut out = lock(buffer);
        write_line(&mut out, level, &line, now);
        out.len() >= HIGH_WATER
    };
    if full {
        flush();
    }
}

/// Writes out whatever lines are buffered.
pub fn flush() {
    let Some(buffer) = BUFFER.get() else {
        return;
    };
    let batch = std::mem::take(&mut *lock(buffer));
    if batch.is_empty() {
        return;
    }
    // Nowhere to report a failure to write to stderr.
    let _ = std::io::stderr().lock().write_all(&batch);
    // Give the allocation back for the next batch, unless lines came in
    // meanwhile.
    let mut buffer = lock(buffer);
    if buffer.is_empty() {
        let mut batch = batch;
        batch.clear();
        *buffer = batch;
    }
}

/// `text` with each control character (C0, DEL, C1) and `\` written as an
/// escape: `\xNN` for ASCII, `\u{NN}` beyond. The usual request line
/// has none and is not copied.
pub(crate) fn escaped(text: &str) -> Cow<'_, str> {
    let plain = |b: &u8| (b' '..0x7f).contains(b) && *b != b'\\';
    if text.bytes().all(|b| plain(&b)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        // Writing into a String cannot fail.
        match c {
            '\\' => out.push_str("\\x5c"),
            c if c.is_ascii_control() => drop(write!(out, "\\x{:02x}", c as u32)),
            c if c.is_control() => drop(write!(out, "\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Appends `line`, stamped `now`, and a newline.
fn write_line(out: &mut Vec<u8>, level: log::Level, line: &Line<'_>, now: SystemTime) {
    let stamp = OffsetDateTime::from(now)
        .format(TIMESTAMP)
        .unwrap_or_default();
    let remote: &dyn std::fmt::Display = match &line.remote {
        Some(addr) => addr,
        None => &"-",
    };
    let Line {
        method,
        target,
        status,
        bytes,
        elapsed,
        id,
        ..
    } = line;
    let (method, target) = (escaped(method), escaped(target));
    let micros = elapsed.as_micros();
    // Writing into a Vec cannot fail.
    drop(writeln!(
        out,
        "{stamp} {level:<5} [{LOG}] {remote} {method} {target} {status} head+body={bytes}B {}.{:03}ms id={id}",
        micros / 1000,
        micros % 1000
    ));
}

#[cfg(test)]
#[path = "access_log_tests.rs"]
mod tests;
