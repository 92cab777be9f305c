//! The settings of failure on purpose: `--faults`, `--fail-rate` and
//! `--fail-status` (docs/testing-clients.md, "Failure on purpose"), and the rule for which
//! statuses may be asked for, shared by `--fail-status` and a request's
//! `_status`. Applying them to requests is `app/faults.rs`'s work; this
//! file only reads and checks values, so a bad one stops start-up with
//! exit status 2 before anything is served.

use super::{Config, ConfigError, Given};
use crate::error::error_status_line;

/// `--faults` and what it turns on. Off by default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FaultSettings {
    /// `--faults`: `_status`, `_fault` and `--fail-rate` are honoured.
    pub on: bool,
    /// `--fail-rate`: the share of requests failed; `None` when not given.
    pub rate: Option<Rate>,
    /// `--fail-status`: what they fail with; `None` when not given.
    pub status: Option<Failure>,
}

/// What a request failed on purpose gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A problem document with this status.
    Status(u16),
    /// No response: the connection is closed.
    Close,
}

/// The failure of `--fail-status` when it is not given.
pub const DEFAULT_FAILURE: Failure = Failure::Status(503);

/// A share of requests, from 0 to 1 (`--fail-rate`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate(pub f64);

// A rate is parsed from digits and a point only, so it is never NaN, and
// equality is an equivalence.
impl Eq for Rate {}

/// What `_status` and `--fail-status` take, for messages.
pub const STATUSES: &str = "a status HTTP defines from 400 to 599, such as 429, 500, 502 or 503 \
     (but not 405, 407 or 426)";

/// The statuses that may be asked for: every client and server error
/// status of IANA's registry (`error.rs`) but three, whose required
/// header field would describe something this server does not do: 405
/// (`Allow`, the path's methods, RFC 9110 section 15.5.6), 407
/// (`Proxy-Authenticate`: it is no proxy, section 15.5.8) and 426
/// (`Upgrade`: it offers no other protocol, section 15.5.22).
pub fn status(text: &str) -> Result<u16, &'static str> {
    let valid = text.len() == 3 && text.bytes().all(|b| b.is_ascii_digit());
    let status: u16 = text.parse().ok().filter(|_| valid).ok_or(STATUSES)?;
    let allowed = (400..=599).contains(&status)
        && error_status_line(status).is_some()
        && !matches!(status, 405 | 407 | 426);
    allowed.then_some(status).ok_or(STATUSES)
}

/// A `--fail-status`: a status [`status`] allows, or `close`.
pub(super) fn failure(text: &str) -> Result<Failure, &'static str> {
    const EXPECTED: &str = "close, or a status HTTP defines from 400 to 599, such as 429, \
         500, 502 or 503 (but not 405, 407 or 426)";
    match text.trim() {
        "close" => Ok(Failure::Close),
        text => status(text).map(Failure::Status).map_err(|_| EXPECTED),
    }
}

/// A `--fail-rate`: a decimal from 0 to 1, such as `0.2`.
pub(super) fn rate(text: &str) -> Result<Rate, &'static str> {
    const EXPECTED: &str = "a share of requests from 0 to 1, such as 0.2";
    let text = text.trim();
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    let points = text.bytes().filter(|&b| b == b'.').count();
    if digits == 0 || digits + points != text.len() || points > 1 {
        return Err(EXPECTED);
    }
    let rate: f64 = text.parse().map_err(|_| EXPECTED)?;
    (0.0..=1.0)
        .contains(&rate)
        .then_some(Rate(rate))
        .ok_or(EXPECTED)
}

/// `--fail-rate` and `--fail-status` mean something only with `--faults`:
/// without it, either is refused, named as it was given, rather than
/// silently ignored.
pub(super) fn check(config: &Config, given: &[Given]) -> Result<(), ConfigError> {
    if config.faults.on {
        return Ok(());
    }
    let without = given
        .iter()
        .find(|setting| matches!(setting.opt.flag, "--fail-rate" | "--fail-status"));
    match without {
        Some(setting) => Err(ConfigError::BadValue {
            source: if setting.by_flag {
                setting.opt.flag.to_string()
            } else {
                format!("environment variable {}", setting.opt.env)
            },
            value: setting.value.clone(),
            expected: "--faults (or FAULTS=1) as well, which turns failure on purpose on",
        }),
        None => Ok(()),
    }
}

impl FaultSettings {
    /// A few words for the start-up summary, when on.
    pub(super) fn mode(&self, seed: u64) -> Option<String> {
        if !self.on {
            return None;
        }
        let Some(Rate(rate)) = self.rate.filter(|Rate(rate)| *rate > 0.0) else {
            return Some("faults on (_status, _fault)".into());
        };
        let failure = match self.status.unwrap_or(DEFAULT_FAILURE) {
            Failure::Status(status) => status.to_string(),
            Failure::Close => "closed connections".into(),
        };
        Some(format!(
            "faults on (_status, _fault); {rate} of requests fail with {failure} (seed {seed})"
        ))
    }
}

#[cfg(test)]
#[path = "fault_settings_tests.rs"]
mod tests;
