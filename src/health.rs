//! What `/healthz` reports besides the store: a note that the server's
//! connection handling sets while it cannot serve as it should (see
//! `transport/capacity.rs`), and clears when it can again.

use std::sync::Mutex;

use crate::error::lock;

/// Why the server is unhealthy, if it is.
#[derive(Debug, Default)]
pub struct Health {
    trouble: Mutex<Option<String>>,
}

impl Health {
    /// Records why the server cannot serve as it should, or `None` once it can.
    pub fn set(&self, trouble: Option<String>) {
        *lock(&self.trouble) = trouble;
    }

    /// Why the server is unhealthy; `None` when it is healthy.
    pub fn trouble(&self) -> Option<String> {
        lock(&self.trouble).clone()
    }
}
