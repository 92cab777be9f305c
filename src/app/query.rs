//! Check 6 of `mod.rs`: the query string, by what each path takes: a
//! collection's list query (`model/query.rs`), the request log's filters
//! (`record.rs`), or nothing but `_delay` and the cache-buster `_`.

use std::time::Duration;

use super::{App, events, record};
use crate::config::MAX_DELAY_MS;
use crate::error::ApiError;
use crate::http::Method;
use crate::model::query::{self, ListQuery, bad, repeated};
use crate::model::{Todo, Widget, parse_decimal};

impl App {
    /// Check 6: the query, by what the path and the method take. A list
    /// query is returned for the handler; any other query is only checked.
    pub(super) fn check_query(
        &self,
        method: Method,
        segments: &[&str],
        pairs: &[(String, String)],
    ) -> Result<Option<ListQuery>, ApiError> {
        let reads = matches!(method, Method::Get | Method::Head | Method::Options);
        if !pairs.is_empty() {
            delay(pairs)?;
        }
        match segments {
            ["api", "todos"] if reads => return query::parse::<Todo>(pairs).map(Some),
            ["api", "widgets"] if reads => return query::parse::<Widget>(pairs).map(Some),
            ["api", "events"] if reads => {
                events::Query::parse(pairs)?;
            }
            ["_admin", "requests"] if reads && self.recorder.is_some() => {
                record::Filter::parse(pairs)?;
            }
            _ if pairs.is_empty() => {}
            _ => {
                let other = pairs
                    .iter()
                    .find(|(name, _)| name != "_delay" && name != "_");
                if let Some((name, _)) = other {
                    if let Some(relations) = query::relations(name) {
                        return Err(relations);
                    }
                    return Err(ApiError::BadRequest {
                        detail: format!(
                            "unknown query parameter '{name}': this path takes no query parameters"
                        ),
                        hint: Some("remove the query string".into()),
                    });
                }
            }
        }
        Ok(None)
    }
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
