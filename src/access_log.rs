//! The access log: one line per request on stderr, written in batches.
//!
//! Everything else the server logs goes through `log` and simple_logger,
//! which writes each line to stderr as it comes: two `write` calls a line.
//! One line per request that way cost a third of the throughput (see the
//! README, "Performance"). So access lines, in the same format, go into a
//! buffer instead, and a thread writes the buffer out every
//! [`FLUSH_EVERY`], or sooner when it fills. The price: a line reaches
//! stderr up to that late, and a `kill -9` loses the last
//! [`FLUSH_EVERY`] of lines. `main` flushes before it exits.
//!
//! The log is on when `log` would print `info` lines (`--log-level info`
//! or more), so it follows the same flag.

use std::fmt;
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use crate::connection::lock;

/// How often buffered lines are written out.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Written out at once past this many bytes, without waiting for the thread.
const HIGH_WATER: usize = 64 * 1024;

static BUFFER: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();

/// Whether access lines are logged at all.
pub fn enabled() -> bool {
    log::log_enabled!(target: "widgets_todos::connection", log::Level::Info)
}

/// Adds one line, `message` after the same timestamp, level and target
/// simple_logger writes.
pub fn record(message: fmt::Arguments<'_>) {
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
            log::warn!("cannot start the access log thread ({err}); lines wait for a full buffer");
        }
        Mutex::new(Vec::with_capacity(HIGH_WATER))
    });
    let full = {
        let mut buffer = lock(buffer);
        // Writing into a Vec cannot fail.
        let _ = writeln!(
            buffer,
            "{} INFO  [widgets_todos::connection] {message}",
            Timestamp(SystemTime::now())
        );
        buffer.len() >= HIGH_WATER
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

/// A UTC time as simple_logger writes it: `2026-11-21T07:00:00.123Z`.
struct Timestamp(SystemTime);

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let since = self
            .0
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = since.as_secs();
        let (year, month, day) = civil_from_days((secs / 86_400) as i64);
        let of_day = secs % 86_400;
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60,
            since.subsec_millis()
        )
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days` algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_match_the_calendar() {
        let at = |secs: u64, millis: u64| {
            Timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis))
                .to_string()
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a year divisible by 400).
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(1_795_248_889, 123), "2026-11-21T08:14:49.123Z");
        assert_eq!(at(4_102_444_799, 999), "2099-12-31T23:59:59.999Z");
    }
}
