//! react-admin's simple-rest dialect (`ra-data-simple-rest`): three list
//! parameters whose values are JSON, read here into the terms of the list
//! query of `query.rs` (its filters, sort and slice), which runs them. Not
//! a second query language: each parameter says what json-server's
//! parameters say.
//!
//! | parameter | means | json-server's |
//! |---|---|---|
//! | `sort=["title","DESC"]` | order by a field, `ASC` or `DESC` in any case | `_sort=title&_order=desc` |
//! | `range=[0,9]` | items 0 to 9, both included | `_start=0&_end=10` |
//! | `filter={"userId":1,"q":"milk"}` | each member a filter, as in a query string | `userId=1&q=milk` |
//! | `filter={"id":[1,3]}` | an array: any of the values | `id=1&id=3` |
//!
//! A member of `filter` is named as a query parameter is: a field, a field
//! with `_ne`, `_gte`, `_lte` or `_like`, or `q`. Its value is a string, a
//! number or a boolean, read by the field's type as in a query string; an
//! array of those only for equality. `sort` cannot be mixed with `_sort`
//! or `_order`, nor `range` with `_page`, `_limit`, `_start` or `_end`; the
//! rest mixes freely (all filters must hold). A list that uses the dialect
//! also gets `Content-Range: todos 0-9/42` ([`ListQuery::content_range`]).
//! Every error is a 400 that names the parameter and says how to write it.

use serde::de::IgnoredAny;
use serde_json::Value;

use std::collections::BTreeSet;

use super::{Counts, ListQuery, Slice, bad_hinted as hinted, parse_slice, parse_sort, set_once};
use crate::error::ApiError;
use crate::model::{Field, FieldType, Input, Members, Queryable, spelling};

/// The dialect's parameters as sent, each at most once.
#[derive(Debug, Default)]
pub(super) struct Dialect {
    sort: Option<String>,
    range: Option<String>,
    filter: Option<String>,
}

impl Dialect {
    /// Keeps the value of `sort`, `range` or `filter`; 400 for a second.
    pub(super) fn set(&mut self, name: &str, value: String) -> Result<(), ApiError> {
        let slot = match name {
            "sort" => &mut self.sort,
            "range" => &mut self.range,
            _ => &mut self.filter,
        };
        set_once(slot, name, value)
    }

    /// Adds to `query` what the dialect's parameters say, and what
    /// json-server's sort and slice parameters say (`sort` and `counts`,
    /// as `query.rs` collected them) where the dialect's say nothing; 400
    /// where both say it.
    pub(super) fn apply<T: Queryable>(
        self,
        query: &mut ListQuery,
        (sort, order): (Option<String>, Option<String>),
        counts: &Counts,
    ) -> Result<(), ApiError> {
        query.simple_rest = true;
        if let Some(value) = &self.filter {
            for (name, values) in filter(value)? {
                query.add_filter::<T>("filter", &name, values)?;
            }
        }
        query.sort = match &self.sort {
            Some(_) if sort.is_some() || order.is_some() => {
                return Err(hinted(
                    "sort",
                    "sort cannot be combined with _sort or _order".into(),
                    "use sort=[\"field\",\"ASC\"] alone, or _sort and _order",
                ));
            }
            Some(value) => vec![self::sort::<T>(value)?],
            None => parse_sort::<T>(sort.as_deref(), order.as_deref())?,
        };
        query.slice = match &self.range {
            Some(_) if counts.any() => {
                return Err(hinted(
                    "range",
                    "range cannot be combined with _page, _limit, _start or _end".into(),
                    "use range=[first,last] alone, or json-server's parameters",
                ));
            }
            Some(value) => {
                let (start, len) = range(value)?;
                Slice::Range { start, len }
            }
            None => parse_slice(counts)?,
        };
        Ok(())
    }
}

impl ListQuery {
    /// The `Content-Range` header of a query in the simple-rest dialect:
    /// `todos 0-9/42`, the positions of the items sent (from 0, both
    /// included) and how many matched; with no item sent, `todos */42`
    /// (RFC 9110 section 14.4's form for a range that selects nothing).
    /// `collection` is the range unit, as react-admin's provider expects.
    pub fn content_range(&self, collection: &str, total: usize) -> Option<String> {
        if !self.simple_rest {
            return None;
        }
        let sent = self.range(total);
        Some(if sent.is_empty() {
            format!("{collection} */{total}")
        } else {
            format!("{collection} {}-{}/{total}", sent.start, sent.end - 1)
        })
    }
}

/// A 400 for a value in `filter` that its field does not take, with a
/// value that fits: in `filter`, values are JSON.
pub(super) fn with_example<T: Queryable>(err: ApiError, field: usize) -> ApiError {
    let ApiError::BadRequest { detail, hint: None } = err else {
        return err;
    };
    let (name, field_type) = (T::FIELDS[field].name(), T::FIELDS[field].field_type());
    let example = match field_type {
        FieldType::Integer => "3",
        FieldType::Boolean => "true",
        FieldType::Text => "\"milk\"",
    };
    ApiError::BadRequest {
        detail,
        hint: Some(format!("for example filter={{\"{name}\":{example}}}")),
    }
}

/// `sort=["field","ASC"|"DESC"]`: the field's index, and whether
/// descending.
fn sort<T: Queryable>(value: &str) -> Result<(usize, bool), ApiError> {
    let hint = "send a field and ASC or DESC as a JSON array: sort=[\"id\",\"ASC\"]";
    let parsed = serde_json::from_str::<Value>(value).ok();
    let (field, order) = match parsed.as_ref().and_then(Value::as_array).map(Vec::as_slice) {
        Some([Value::String(field), Value::String(order)]) => (field, order),
        _ => {
            return Err(hinted(
                "sort",
                format!("'{value}' is not a field and an order"),
                hint,
            ));
        }
    };
    let Some(index) = T::FIELDS.iter().position(|name| name.name() == field) else {
        let fields: Vec<&str> = T::FIELDS.iter().map(Field::name).collect();
        let meant = spelling::closest(field, &fields);
        let hint = match meant {
            Some(meant) => format!("did you mean sort=[\"{meant}\",\"{order}\"]?"),
            None => format!("sort by one of: {}", fields.join(", ")),
        };
        return Err(hinted("sort", format!("'{field}' is not a field"), &hint));
    };
    let descending = if order.eq_ignore_ascii_case("asc") {
        false
    } else if order.eq_ignore_ascii_case("desc") {
        true
    } else {
        return Err(hinted("sort", format!("'{order}' is not an order"), hint));
    };
    Ok((index, descending))
}

/// `range=[first,last]`: positions from 0, both included. `None` for
/// `[0,18446744073709551615]`, whose count does not fit in 64 bits, which
/// is no limit.
fn range(value: &str) -> Result<(u64, Option<u64>), ApiError> {
    let hint = "send the first and last positions, from 0, as a JSON array: range=[0,9]";
    let parsed = serde_json::from_str::<Value>(value).ok();
    let (first, last) = match parsed.as_ref().and_then(Value::as_array).map(Vec::as_slice) {
        Some([first, last]) => match (first.as_u64(), last.as_u64()) {
            (Some(first), Some(last)) => (first, last),
            _ => {
                return Err(hinted(
                    "range",
                    format!("'{value}' is not two positions"),
                    hint,
                ));
            }
        },
        _ => {
            return Err(hinted(
                "range",
                format!("'{value}' is not two positions"),
                hint,
            ));
        }
    };
    if last < first {
        return Err(hinted(
            "range",
            format!("the last position ({last}) is before the first ({first})"),
            hint,
        ));
    }
    Ok((first, (last - first).checked_add(1)))
}

/// `filter={...}`: each member as a query parameter's name and its values
/// (more than one only for an array), in the order sent.
fn filter(value: &str) -> Result<Vec<(String, Vec<String>)>, ApiError> {
    let hint = "send a JSON object of filters: filter={\"completed\":true,\"q\":\"milk\"}";
    // Read member by member, as a request body is: serde_json's own map
    // keeps only the last of a repeated name, which would drop a filter
    // without a word.
    let members = match serde_json::from_str::<Members>(value) {
        Ok(Members(members)) => members,
        Err(err) if err.is_data() && serde_json::from_str::<IgnoredAny>(value).is_ok() => {
            return Err(hinted("filter", "it is not a JSON object".into(), hint));
        }
        Err(err) => {
            let why = format!("it is not valid JSON ({err})");
            return Err(hinted("filter", why, hint));
        }
    };
    let mut names = BTreeSet::new();
    if let Some((name, _)) = members.iter().find(|(name, _)| !names.insert(name)) {
        return Err(hinted(
            "filter",
            format!("'{name}' is given more than once"),
            "give each member once; for any of several values, an array: {\"id\":[1,3]}",
        ));
    }
    let mut filters = Vec::with_capacity(members.len());
    for (name, value) in members {
        let value = match value {
            Input::Json(value) => value,
            Input::Text(text) => Value::String(text),
        };
        let values = match value {
            Value::Array(values) if is_equality(&name) => values
                .iter()
                .map(|value| scalar(&name, value))
                .collect::<Result<_, _>>()?,
            Value::Array(_) => {
                let why = format!(
                    "'{name}' has an array: an array means any of its values, which only a \
                     field's equality takes"
                );
                return Err(hinted(
                    "filter",
                    why,
                    "give one value, or filter on the field itself: {\"id\":[1,3]}",
                ));
            }
            value => vec![scalar(&name, &value)?],
        };
        filters.push((name, values));
    }
    Ok(filters)
}

/// Whether a member of `filter` is a field's equality: not `q`, not a
/// field with an operator.
fn is_equality(name: &str) -> bool {
    name != "q"
        && !["_ne", "_gte", "_lte", "_like"]
            .iter()
            .any(|op| name.ends_with(op))
}

/// A value of `filter` as a query string would carry it.
fn scalar(name: &str, value: &Value) -> Result<String, ApiError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => Err(hinted(
            "filter",
            format!("'{name}' is null, which no field holds"),
            "leave the member out to not filter on it",
        )),
        Value::Array(_) | Value::Object(_) => Err(hinted(
            "filter",
            format!("'{name}' holds {value}: a filter's value is a string, a number or a boolean"),
            "give one value, or an array of values for any of them: {\"id\":[1,3]}",
        )),
    }
}
