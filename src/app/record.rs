//! The request log of `--record N`: the last N exchanges, kept in
//! memory, so that a test can ask the server what its client actually sent
//! (the method, the target, the header fields the server reads, the body)
//! and what it answered. WireMock's `/__admin/requests` is the model.
//!
//! The request log has three endpoints of its own, outside `/api` so that they
//! never collide with the data, and never recorded themselves:
//! `GET /_admin/requests` (newest first, with filters), `GET
//! /_admin/requests/{id}` (one exchange by its `X-Request-Id`), and `DELETE
//! /_admin/requests`. With `--auth-token` they need the bearer token, as
//! `/api` does.
//!
//! Memory is bounded twice: at most N entries, and at most [`BUDGET`]
//! bytes as [`Entry::cost`] counts them (the entry and its text: target,
//! header values, body); the oldest entries go first. The newest entry is
//! always kept, so a body of up to `--max-body-bytes` may exceed the
//! budget by itself. An `Authorization` value is never stored, only its
//! scheme (`Bearer (hidden)`).
//!
//! Reading is bounded too: one listing sends at most [`PAGE_BYTES`] of
//! JSON, escapes included (a control byte in a body is six bytes there),
//! and says in a `Link` header (RFC 8288, `rel="next"`) where the rest
//! is: the same filters, `before` the last entry it sent. So four readers
//! of a full log cost four pages, not four copies of the log six
//! times over.
//!
//! Off, the default, the application holds no request log and a request pays
//! one branch on an `Option`. On, a request is recorded once its response
//! is made, before it is written, under one short lock; a reader takes
//! the entries it wants under the same lock and serializes them after.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::{Serialize, Serializer};
use time::OffsetDateTime;

use crate::config::MAX_RECORD;
use crate::error::{ApiError, lock};
use crate::http::{
    Body, JSON, Method, PROBLEM_JSON, Request, Response, TIMESTAMP, instance_member,
};
use crate::model::parse_decimal;
use crate::model::query::{bad, repeated};
use crate::model::spelling;

/// The most bytes the entries may take in all, as [`Entry::cost`] counts.
pub const BUDGET: usize = 64 << 20;

/// The most bytes of JSON one listing sends. The first entry is always
/// sent, so a page larger than this holds one entry alone.
pub const PAGE_BYTES: usize = 4 << 20;

/// The query parameters of `GET /_admin/requests`.
const FILTERS: &[&str] = &["method", "path", "status", "since", "before", "limit"];

/// The request log: the entries, oldest first, under one lock.
pub struct Recorder {
    capacity: usize,
    /// [`BUDGET`], but for tests.
    budget: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: VecDeque<Arc<Entry>>,
    /// The sum of the entries' costs.
    bytes: usize,
    /// The last `seq` given: never reused, not even after a `DELETE`.
    last_seq: u64,
}

/// One exchange, as `GET /_admin/requests` shows it.
#[derive(Debug, Serialize)]
pub struct Entry {
    seq: u64,
    id: String,
    #[serde(serialize_with = "rfc3339")]
    time: SystemTime,
    method: String,
    target: String,
    #[serde(serialize_with = "by_name")]
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
    status: u16,
    size: usize,
    #[serde(serialize_with = "milliseconds")]
    duration_ms: Duration,
    #[serde(skip)]
    cost: usize,
}

/// When the handling of a request began: the clock for `time`, the
/// monotonic one for `duration_ms`.
pub struct Started(SystemTime, Instant);

impl Started {
    pub fn now() -> Started {
        Started(SystemTime::now(), Instant::now())
    }
}

impl Recorder {
    /// A request log of at most `capacity` entries (`--record N`).
    pub fn new(capacity: usize) -> Recorder {
        Recorder {
            capacity,
            budget: BUDGET,
            state: Mutex::default(),
        }
    }

    /// Records `req` and its `response` (the caller leaves out the
    /// request log's own, `/_admin`). `body`: the body as the request read
    /// it (`Request::body_read`); `None` when it was never read.
    pub fn add(&self, req: &Request<'_>, body: Option<Vec<u8>>, response: &Response, at: Started) {
        let headers = req.headers.iter();
        let body = body.map(|bytes| {
            String::from_utf8(bytes)
                .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned())
        });
        let mut entry = Entry {
            seq: 0,
            id: req.id.to_string(),
            time: at.0,
            method: req.method_name.to_string(),
            target: req.target.to_string(),
            headers: headers
                .map(|(name, value)| (*name, hidden(name, value)))
                .collect(),
            body,
            status: response.status,
            size: body_size(req, response),
            duration_ms: at.1.elapsed(),
            cost: 0,
        };
        entry.cost = entry.cost();
        self.push(entry);
    }

    /// Adds `entry` as the newest, then drops the oldest while there are
    /// more than N, or more than [`BUDGET`] bytes and more than one.
    fn push(&self, mut entry: Entry) {
        let mut state = lock(&self.state);
        state.last_seq += 1;
        entry.seq = state.last_seq;
        state.bytes += entry.cost;
        state.entries.push_back(Arc::new(entry));
        while state.entries.len() > self.capacity
            || (state.bytes > self.budget && state.entries.len() > 1)
        {
            if let Some(oldest) = state.entries.pop_front() {
                state.bytes -= oldest.cost;
            }
        }
    }

    /// The entries `filter` selects, newest first, at most its limit and
    /// no more than a page of `page_bytes` can hold, and how many it
    /// selects in all. An entry's text is at least as long in JSON, so
    /// the entries picked fill the page.
    fn select(&self, filter: &Filter, page_bytes: usize) -> (Vec<Arc<Entry>>, usize) {
        let state = lock(&self.state);
        let mut total = 0;
        let mut picked = Vec::new();
        let mut text = 0;
        // `seq` grows from the oldest entry to the newest.
        let newest = state.entries.iter().rev();
        let selected = newest
            .skip_while(|e| filter.before.is_some_and(|before| e.seq >= before))
            .take_while(|e| e.seq > filter.since)
            .filter(|e| filter.matches(e));
        for entry in selected {
            total += 1;
            if filter.limit.is_none_or(|limit| picked.len() < limit) && text <= page_bytes {
                text += entry.text();
                picked.push(Arc::clone(entry));
            }
        }
        (picked, total)
    }

    /// The newest entry with this request id.
    fn find(&self, id: &str) -> Option<Arc<Entry>> {
        let state = lock(&self.state);
        state.entries.iter().rev().find(|e| e.id == id).cloned()
    }

    fn clear(&self) {
        let mut state = lock(&self.state);
        state.entries.clear();
        state.bytes = 0;
    }
}

impl Entry {
    /// What the entry takes: itself and its text, without the allocator's
    /// own overhead.
    fn cost(&self) -> usize {
        std::mem::size_of::<Entry>()
            + self.headers.len() * std::mem::size_of::<(&str, String)>()
            + self.text()
    }

    /// The bytes of its text: target, header values, body and the rest.
    fn text(&self) -> usize {
        let headers: usize = self.headers.iter().map(|(_, v)| v.len()).sum();
        headers
            + self.id.len()
            + self.method.len()
            + self.target.len()
            + self.body.as_ref().map_or(0, String::len)
    }
}

/// A listing's body: a JSON array of `entries`, in order, while it stays
/// within `page_bytes` (the first entry always goes in), and the `seq` of
/// the last entry it holds. `entries` may hold more than fit.
fn page(entries: &[Arc<Entry>], page_bytes: usize) -> Result<(Vec<u8>, usize), ApiError> {
    let mut out = vec![b'['];
    let mut sent = 0;
    for entry in entries {
        let mark = out.len();
        if sent > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &**entry).map_err(|err| {
            // Our own types always serialize; reaching this is a bug.
            log::error!(target: crate::logging::LOG, "cannot serialize a recorded request: {err}");
            ApiError::Internal
        })?;
        // One more byte for the closing bracket.
        if sent > 0 && out.len() + 1 > page_bytes {
            out.truncate(mark);
            break;
        }
        sent += 1;
    }
    out.push(b']');
    Ok((out, sent))
}

/// A header field's value as recorded: an `Authorization` value only by
/// its scheme (`Bearer (hidden)`), since it holds a secret.
fn hidden(name: &str, value: &str) -> String {
    if name != "Authorization" {
        return value.to_string();
    }
    let scheme = value.split_whitespace().next().filter(|scheme| {
        ["Bearer", "Basic"]
            .iter()
            .any(|known| scheme.eq_ignore_ascii_case(known))
    });
    match scheme {
        Some(scheme) => format!("{scheme} (hidden)"),
        None => "(hidden)".into(),
    }
}

/// The bytes of response body sent: none for HEAD (RFC 9110 section
/// 9.3.2), 204 and 304. A problem document gets its `instance` after the
/// handler, from the transport: counted here as it will be sent.
fn body_size(req: &Request<'_>, response: &Response) -> usize {
    if req.method == Method::Head {
        return 0;
    }
    let instance = match &response.body {
        Some((PROBLEM_JSON, _)) => instance_member(req.id).map_or(0, |member| member.len()),
        _ => 0,
    };
    response.body_bytes().len() + instance
}

/// The filters of `GET /_admin/requests`; each one given must match.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Filter {
    method: Option<String>,
    path: Option<String>,
    status: Option<u16>,
    since: u64,
    before: Option<u64>,
    limit: Option<usize>,
}

impl Filter {
    /// The filters of a query. Unknown, repeated, empty or malformed
    /// parameters are 400, naming the parameter. `_` (a cache-buster) is
    /// ignored, and `_delay` is checked and ignored, as on every path.
    pub(super) fn parse(pairs: &[(String, String)]) -> Result<Filter, ApiError> {
        let mut filter = Filter::default();
        let mut seen: Vec<&str> = Vec::new();
        for (name, value) in pairs {
            let name = name.as_str();
            if name == "_" || name == "_delay" {
                continue;
            }
            if !FILTERS.contains(&name) {
                return Err(unknown(name));
            }
            if seen.contains(&name) {
                return Err(repeated(name));
            }
            seen.push(name);
            if value.is_empty() {
                return Err(bad(name, "the value is empty".into()));
            }
            let number = |min: u64, max: u64| {
                let why = || match name {
                    "status" => format!("'{value}' is not a status code from 100 to 599"),
                    "since" | "before" => {
                        format!("'{value}' is not a sequence number (an entry's seq)")
                    }
                    _ => format!("'{value}' is not a whole number from 0 to {MAX_RECORD}"),
                };
                let n = parse_decimal(value).filter(|n| (min..=max).contains(n));
                n.ok_or_else(|| bad(name, why()))
            };
            match name {
                "method" => filter.method = Some(value.clone()),
                "path" => filter.path = Some(value.clone()),
                "status" => filter.status = Some(number(100, 599)? as u16),
                "since" => filter.since = number(0, u64::MAX)?,
                "before" => filter.before = Some(number(0, u64::MAX)?),
                _ => filter.limit = Some(number(0, MAX_RECORD as u64)? as usize),
            }
        }
        Ok(filter)
    }

    /// The same filters for the entries after the `sent` of this page,
    /// the last with `seq` `last`: a `Link` to the next page.
    fn next(&self, last: u64, sent: usize) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        let texts = [("method", &self.method), ("path", &self.path)];
        for (name, value) in texts {
            if let Some(value) = value {
                query.append_pair(name, value);
            }
        }
        if let Some(status) = self.status {
            query.append_pair("status", &status.to_string());
        }
        if self.since > 0 {
            query.append_pair("since", &self.since.to_string());
        }
        query.append_pair("before", &last.to_string());
        if let Some(limit) = self.limit {
            query.append_pair("limit", &(limit - sent).to_string());
        }
        format!("</_admin/requests?{}>; rel=\"next\"", query.finish())
    }

    fn matches(&self, entry: &Entry) -> bool {
        let path = entry
            .target
            .split_once('?')
            .map_or(&*entry.target, |(p, _)| p);
        self.method.as_ref().is_none_or(|m| *m == entry.method)
            && self.path.as_ref().is_none_or(|p| p == path)
            && self.status.is_none_or(|s| s == entry.status)
    }
}

/// The 400 for a parameter `GET /_admin/requests` does not take.
fn unknown(name: &str) -> ApiError {
    let hint = match spelling::closest(name, FILTERS) {
        Some(meant) => format!("did you mean {meant}?"),
        None => "check the parameter's spelling against the list".into(),
    };
    ApiError::BadRequest {
        detail: format!(
            "unknown query parameter '{name}'; the parameters are {}",
            FILTERS.join(", ")
        ),
        hint: Some(hint),
    }
}

/// `DELETE /_admin/requests`: every entry gone.
pub(super) fn clear(recorder: &Recorder) -> Response {
    recorder.clear();
    Response::empty(204)
}

/// `GET` and `HEAD /_admin/requests`: the entries the filters select,
/// newest first, with `X-Total-Count`, a page of at most [`PAGE_BYTES`]
/// and a `Link` to the next. HEAD makes the page too, for its
/// `Content-Length` and `Link` (RFC 9110 section 9.3.2).
pub(super) fn requests(
    recorder: &Recorder,
    pairs: &[(String, String)],
) -> Result<Response, ApiError> {
    let filter = Filter::parse(pairs)?;
    let (entries, total) = recorder.select(&filter, PAGE_BYTES);
    let (body, sent) = page(&entries, PAGE_BYTES)?;
    let mut response = Response::bytes(200, JSON, Body::Owned(body))
        .with_header("X-Total-Count", total.to_string());
    let wanted = filter.limit.map_or(total, |limit| limit.min(total));
    if let Some(last) = entries[..sent].last().filter(|_| sent < wanted) {
        response = response.with_header("Link", filter.next(last.seq, sent));
    }
    Ok(response)
}

/// `/_admin/requests/{id}`: the newest entry with that request id.
pub(super) fn request(recorder: &Recorder, id: &str) -> Result<Response, ApiError> {
    match recorder.find(id) {
        Some(entry) => Ok(Response::json(200, &*entry)),
        None => Err(ApiError::NotFound {
            detail: format!("no recorded request with id '{id}'"),
            hint: Some(
                "the request log keeps only the last --record N requests: GET /_admin/requests lists them"
                    .into(),
            ),
        }),
    }
}

/// `time`: RFC 3339, in UTC, with milliseconds.
fn rfc3339<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    let text = OffsetDateTime::from(*time)
        .format(TIMESTAMP)
        .map_err(serde::ser::Error::custom)?;
    serializer.serialize_str(&text)
}

/// `headers`: an object, by field name.
fn by_name<S: Serializer>(
    headers: &[(&'static str, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(headers.iter().map(|(name, value)| (name, value)))
}

/// `duration_ms`: milliseconds, to the microsecond.
fn milliseconds<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_micros() as f64 / 1000.0)
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
