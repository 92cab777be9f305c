//! The log on stderr: one line per event, `<time> <LEVEL> <message>`, the
//! time in UTC as `transport::access_log` writes it. The module that
//! logged is named only at `debug` and `trace` (`[widgets_todos::store]`),
//! where it helps find the code; a person reading `info` and above needs
//! what happened, not where.
//!
//! Each line is formatted whole, then written with one call, so lines from
//! different threads never interleave.

use std::io::Write;

use log::{Level, LevelFilter, Log, Metadata, Record, SetLoggerError};

use crate::http::TIMESTAMP;

struct Logger;

impl Log for Logger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let stamp = time::OffsetDateTime::now_utc()
            .format(TIMESTAMP)
            .unwrap_or_default();
        let line = match record.level() {
            level @ (Level::Debug | Level::Trace) => {
                format!(
                    "{stamp} {level:<5} [{}] {}\n",
                    record.target(),
                    record.args()
                )
            }
            level => format!("{stamp} {level:<5} {}\n", record.args()),
        };
        // Nowhere to report a failure to write to stderr.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

/// Sends `log`'s lines to stderr, those up to `level`.
pub fn init(level: LevelFilter) -> Result<(), SetLoggerError> {
    log::set_logger(&Logger)?;
    log::set_max_level(level);
    Ok(())
}
