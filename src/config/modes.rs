//! The start-up summary's "modes": each setting that differs from its
//! default, in a few words.

use super::{Config, Cors, DURABLE_THREADS};

impl Config {
    /// The settings that differ from their default, a few words each, for
    /// the start-up summary (the address and the data file are said apart).
    pub fn modes(&self) -> Vec<String> {
        let default = Config::default();
        let default_threads = if self.data.is_some() {
            default.threads.max(DURABLE_THREADS)
        } else {
            default.threads
        };
        let mut modes = Vec::new();
        if self.auth_token.is_some() {
            modes.push("bearer token required on /api".to_string());
        }
        if self.read_only {
            modes.push("read-only (writes get 405)".into());
        }
        if self.allow_reset {
            modes.push("reset allowed (DELETE on a collection empties it)".into());
        }
        match &self.cors {
            Cors::Any => {}
            Cors::Off => modes.push("CORS off".into()),
            Cors::Origins(origins) => modes.push(format!("CORS only for {}", origins.join(", "))),
        }
        if !self.delay.is_zero() {
            modes.push(format!("delay {} ms", self.delay.as_millis()));
        }
        if self.max_items != default.max_items {
            modes.push(format!("at most {} items per collection", self.max_items));
        }
        if self.max_body_bytes != default.max_body_bytes {
            modes.push(format!("bodies up to {} bytes", self.max_body_bytes));
        }
        if self.threads != default_threads {
            modes.push(format!("{} worker threads", self.threads));
        }
        if let Some(connections) = self.max_connections {
            modes.push(format!("at most {connections} connections"));
        }
        if self.max_subscribers != default.max_subscribers {
            modes.push(format!(
                "at most {} subscribers to /api/events",
                self.max_subscribers
            ));
        }
        if let Some(kept) = self.events_kept {
            modes.push(format!("the last {kept} events kept"));
        }
        if self.read_timeout != default.read_timeout {
            modes.push(format!("read timeout {} s", self.read_timeout.as_secs()));
        }
        if self.write_timeout != default.write_timeout {
            modes.push(format!("write timeout {} s", self.write_timeout.as_secs()));
        }
        if let Some(n) = self.record {
            modes.push(format!(
                "recording the last {n} requests at /_admin/requests"
            ));
        }
        if self.log_level != default.log_level {
            modes.push(format!("log level {}", self.log_level));
        }
        if self.quiet {
            modes.push("quiet (no access log)".into());
        }
        modes.extend(self.faults.mode(self.seed));
        modes
    }
}
