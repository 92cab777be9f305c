//! Check 5 of `mod.rs`: the query string, decoded once per request, then
//! checked by what the resource takes: a collection's list query
//! (`model/query.rs`), the change feed's (`events.rs`), the request log's
//! filters (`record.rs`), or nothing but `_delay` and the cache-buster `_`.

use std::time::Duration;

use super::{App, Kind, Target, events, record};
use crate::config::MAX_DELAY_MS;
use crate::error::ApiError;
use crate::http::{Method, query_pairs};
use crate::model::query::{self, ListQuery, bad, repeated};
use crate::model::{Todo, Widget, parse_decimal};

/// A request's query string, decoded once. A query that does not decode,
/// or whose `_delay` is not valid, is 400 at check 5 (or at check 2, which
/// reads it first when failure on purpose is on).
pub(super) struct Query {
    /// The parameters, in order; none when the query does not decode.
    pub(super) pairs: Vec<(String, String)>,
    /// `_delay`, when the query names it.
    pub(super) delay: Option<Duration>,
    /// Why the query is refused, if it is.
    pub(super) error: Option<ApiError>,
}

impl Query {
    /// A request without a query.
    pub(super) const NONE: Query = Query {
        pairs: Vec::new(),
        delay: None,
        error: None,
    };

    /// `query`, decoded; `_delay` is read only when a parameter has that
    /// name.
    pub(super) fn decode(query: &str) -> Query {
        let (pairs, error) = match query_pairs(query) {
            Ok(pairs) => (pairs, None),
            Err(error) => (Vec::new(), Some(error)),
        };
        let mut query = Query {
            pairs,
            delay: None,
            error,
        };
        for (name, _) in &query.pairs {
            if name == "_delay" {
                match delay(&query.pairs) {
                    Ok(delay) => query.delay = delay,
                    Err(error) => query.error = Some(error),
                }
                break;
            }
        }
        query
    }

    /// The parameters, or the 400 when the query is refused.
    pub(super) fn pairs(&self) -> Result<&[(String, String)], ApiError> {
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(&self.pairs),
        }
    }
}

impl App {
    /// Check 5: the query, by what the resource and the method take. A
    /// list query is returned for the handler; any other query is only
    /// checked.
    pub(super) fn check_query(
        &self,
        method: Method,
        target: Target<'_>,
        query: &Query,
    ) -> Result<Option<ListQuery>, ApiError> {
        if let Some(error) = &query.error {
            return Err(error.clone());
        }
        let pairs = &query.pairs;
        let reads = matches!(method, Method::Get | Method::Head | Method::Options);
        match target {
            Target::Collection(Kind::Todos) if reads => {
                return query::parse::<Todo>(pairs).map(Some);
            }
            Target::Collection(Kind::Widgets) if reads => {
                return query::parse::<Widget>(pairs).map(Some);
            }
            Target::Events if reads => {
                events::Query::parse(pairs)?;
            }
            Target::Requests if reads => {
                record::Filter::parse(pairs)?;
            }
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
fn delay(pairs: &[(String, String)]) -> Result<Option<Duration>, ApiError> {
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
