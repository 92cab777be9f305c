//! Failure on purpose, with `--faults` (docs/testing-clients.md), so
//! that a client can be tested against a server that fails: a request asks
//! for an error with `_status=503`, or for a dropped connection with
//! `_fault=close`; `--fail-rate P` fails that share of requests by itself
//! with `--fail-status`, the same requests on every run with the same
//! `--seed`. The settings are read and checked in `config/fault_settings.rs`.
//!
//! Only the collections, their items and the change feed fail, and never a CORS preflight
//! (a browser would report a failed preflight as a network error, not as
//! the status its script asked for). `App::check` (`app.rs`, check 2)
//! calls [`Faults::check`] for them after the bearer token and before the
//! id, the method, the query, the body or the store is looked at: a
//! request failed on purpose has read and changed nothing. `/`, `/api`,
//! `/healthz` and the OpenAPI document never fail on purpose.
//!
//! **Which requests `--fail-rate` fails.** Every request that reaches the
//! check is counted, 1, 2, 3, ..., in the order they reach it, with
//! `_status` or `_fault` or without (those win over the rate, but still
//! count). The n-th fails when the n-th number of SplitMix64 seeded with
//! `--seed` (`model/generate.rs`), its top 53 bits read as a fraction from
//! 0 up to 1, is below the rate. Requests sent one at a time are counted in
//! the order they are sent, so two runs fail on the same ones.
//!
//! **The answer.** A status: a problem document (RFC 9457) with that
//! status, its reason phrase as title, and the header fields HTTP asks of
//! it. `close`: no response at all; the transport closes the connection
//! (`Response::unanswered`) and logs the request with status 444, nginx's
//! code for a connection it closed without answering.
//!
//! With `--faults` off, none of this runs on a request that succeeds:
//! `_status` and `_fault` are then unknown parameters, and only the error
//! they cause calls [`hint_when_off`], whose 400 says how to turn them on.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::fault_settings::{DEFAULT_FAILURE, Failure, FaultSettings, Rate, status};
use crate::error::ApiError;
use crate::http::Response;
use crate::model::generate::SplitMix64;
use crate::model::query::{bad, repeated};

/// The status the access log shows for `_fault=close`.
pub const CLOSED: u16 = 444;

/// Failure on purpose in a running server; the application has one only
/// with `--faults`.
#[derive(Debug)]
pub struct Faults {
    /// `--fail-rate`, from 0 to 1.
    rate: f64,
    /// `--fail-status`.
    failure: Failure,
    /// `--seed`.
    seed: u64,
    /// How many requests have been counted.
    counted: AtomicU64,
}

impl Faults {
    /// `None` unless `settings` turn failure on purpose on.
    pub fn new(settings: &FaultSettings, seed: u64) -> Option<Faults> {
        settings.on.then(|| Faults {
            rate: settings.rate.map_or(0.0, |Rate(rate)| rate),
            failure: settings.status.unwrap_or(DEFAULT_FAILURE),
            seed,
            counted: AtomicU64::new(0),
        })
    }

    /// Whether `--fail-rate` fails the `n`-th request counted (see the
    /// module comment). 53 bits: as many as an `f64` holds exactly, so the
    /// comparison comes out the same on every machine.
    fn fails(&self, n: u64) -> bool {
        let draw = (SplitMix64::nth(self.seed, n) >> 11) as f64 / (1u64 << 53) as f64;
        draw < self.rate
    }
}

impl Faults {
    /// The answer to a request that fails on purpose, `None` to serve it.
    /// A bad `_status` or `_fault` is a 400. `pairs`: the request's query.
    pub fn check(&self, pairs: &[(String, String)]) -> Result<Option<Response>, ApiError> {
        let n = self.counted.fetch_add(1, Ordering::Relaxed) + 1;
        let (failure, why) = match asked(pairs)? {
            Some(failure) => (failure, ", as _status asked".to_string()),
            None if self.fails(n) => (
                self.failure,
                format!(
                    ": --fail-rate {} with --seed {} fails request {n}, this one",
                    self.rate, self.seed
                ),
            ),
            None => return Ok(None),
        };
        let status = match failure {
            Failure::Status(status) => status,
            Failure::Close => {
                let mut closed = Response::empty(CLOSED);
                closed.unanswered = true;
                return Ok(Some(closed));
            }
        };
        let detail = format!("failed on purpose{why}; nothing was read or changed");
        let failed = Response::from(ApiError::OnPurpose { status, detail });
        Ok(Some(match status {
            // RFC 9110 section 11.6.1: a 401 carries at least one challenge.
            401 => failed.with_header("WWW-Authenticate", "Bearer"),
            // RFC 9110 section 10.2.3 (with RFC 6585 section 4 for 429): when
            // to try again, which a client's retry logic is tested against.
            429 | 503 => failed.with_header("Retry-After", "1"),
            _ => failed,
        }))
    }
}

/// The failure a request asks for: `_status` or `_fault`, once.
fn asked(pairs: &[(String, String)]) -> Result<Option<Failure>, ApiError> {
    let mut asked: Option<(&str, Failure)> = None;
    for (name, value) in pairs {
        let name = name.as_str();
        let failure = match name {
            "_status" => Failure::Status(
                status(value)
                    .map_err(|expected| bad(name, format!("'{value}' is not {expected}")))?,
            ),
            "_fault" if value == "close" => Failure::Close,
            "_fault" => {
                let why =
                    format!("'{value}' is not a fault this server makes: the one fault is close");
                return Err(bad(name, why));
            }
            _ => continue,
        };
        match asked {
            Some((first, _)) if first == name => return Err(repeated(name)),
            Some(_) => {
                let why = "give _status or _fault, not both".to_string();
                return Err(bad(name, why));
            }
            None => asked = Some((name, failure)),
        }
    }
    Ok(asked.map(|(_, failure)| failure))
}

/// With `--faults` off, `_status` and `_fault` are unknown parameters, so
/// a request that names them fails a check (the query's, or an earlier
/// one). Any such failure but the token's becomes a 400 that says how to
/// turn failure on purpose on. `pairs`: the request's query, none when it
/// does not decode.
pub fn hint_when_off(error: ApiError, pairs: &[(String, String)]) -> ApiError {
    if matches!(error, ApiError::Unauthorized { .. }) {
        return error;
    }
    let asked = pairs
        .iter()
        .find(|(name, _)| name == "_status" || name == "_fault");
    match asked {
        Some((name, _)) => ApiError::BadRequest {
            detail: format!(
                "query parameter '{name}' fails a request on purpose, and this server is not started for that"
            ),
            hint: Some("start the server with --faults (or FAULTS=1)".into()),
        },
        None => error,
    }
}
