//! What check 5 of `app.rs` asks of every query: `_delay`, which every
//! `/api` path takes, and the 400 for a parameter on a path that takes
//! none but `_delay` and the cache-buster `_`. What each resource takes
//! is parsed where the resource is: a collection's list query in
//! `model/query.rs`, the change feed's in `events.rs`, the request log's
//! filters in `record.rs`.

use std::time::Duration;

use crate::config::MAX_DELAY_MS;
use crate::error::ApiError;
use crate::model::parse_decimal;
use crate::model::query::{self, bad, repeated};

/// The query of a route that takes no parameters but `_delay` and `_`:
/// any other is 400, with a hint when it names json-server's relations
/// (`_embed`, `_expand`).
pub(super) fn takes_none(pairs: &[(String, String)]) -> Result<(), ApiError> {
    let other = pairs
        .iter()
        .find(|(name, _)| name != "_delay" && name != "_");
    let Some((name, _)) = other else {
        return Ok(());
    };
    if let Some(relations) = query::relations(name) {
        return Err(relations);
    }
    Err(ApiError::BadRequest {
        detail: format!("unknown query parameter '{name}': this path takes no query parameters"),
        hint: Some("remove the query string".into()),
    })
}

/// The `_delay` parameter of an `/api` request: milliseconds, 0 to
/// 10,000, at most once. `None` when absent.
pub(super) fn delay(pairs: &[(String, String)]) -> Result<Option<Duration>, ApiError> {
    let mut delay = None;
    for (name, value) in pairs {
        if name != "_delay" {
            continue;
        }
        if delay.is_some() {
            return Err(repeated("_delay"));
        }
        let ms = parse_decimal(value).filter(|ms| *ms <= MAX_DELAY_MS);
        let why = || format!("'{value}' is not a number of milliseconds from 0 to {MAX_DELAY_MS}");
        delay = Some(Duration::from_millis(
            ms.ok_or_else(|| bad("_delay", why()))?,
        ));
    }
    Ok(delay)
}
