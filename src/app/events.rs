//! `GET /api/events`: the change feed as server-sent events (the WHATWG
//! HTML standard, section 9.2), one event per acknowledged write, in the
//! order of the writes. The store keeps the events (`store/feed.rs`); this
//! is the subscriber's side: the request's checks, and the stream.
//!
//! # On the wire
//!
//! ```text
//! retry: 1000
//! event: position
//! id: 1767225600000001
//! data: {"detail":"the events after this id follow"}
//!
//! event: created
//! id: 1767225600000002
//! data: {"collection":"todos","id":3,"item":{"id":3,"userId":1,...}}
//!
//! : keep-alive
//! ```
//!
//! Each event is a few `field: value` lines and a blank line. `event:` is
//! what the write did (`created`, `updated`, `deleted`, `reset`); `id:`
//! only grows; `data:` is one line of JSON naming the collection, the
//! item's id, and for a create or an update the item exactly as a GET
//! returns it. The stream opens with `retry:` (how long a client waits
//! before it reconnects) and a `position` event, whose `id:` tells the
//! client where it stands, so that a reconnection always says
//! `Last-Event-ID`, even before the first event. It carries `data:`, for
//! a block with an `id:` and no `data:` is kept by the WHATWG processing
//! model but dropped by some clients (eventsource 4.x for Node); being
//! named, it reaches no `onmessage`. A comment line
//! (`: keep-alive`) comes after [`HEARTBEAT`] without events, so that
//! proxies and clients keep the connection.
//!
//! # Live, or what is held
//!
//! A client that names `text/event-stream` in `Accept` (every
//! `EventSource` does) subscribes: the stream stays open until it leaves,
//! or `_limit` events are sent, or the server stops. Any other client (curl
//! without that header, a link checker, an API fuzzer reading the response
//! to its end) gets the same response, the events held after its
//! `Last-Event-ID` and nothing more: the stream ends at once, saying so.
//!
//! # Resuming
//!
//! With `Last-Event-ID`, the stream starts after that event, from the
//! events the feed holds. When it does not hold them all (the id is too
//! old, from another run, or from before a pause in recording), the stream
//! opens with one `resync` event instead: the client must read the
//! collections again; the events after it follow.
//!
//! # Bounds
//!
//! `--max-subscribers` live subscribers at once (503 with `Retry-After`
//! beyond, after a newcomer has given those whose clients left a moment
//! to notice it: `store/feed.rs`); a request that is not live ends at
//! once, and is not counted. A
//! subscriber reads the feed at its own pace, on its connection's thread,
//! without a turn of `--threads`; what has accumulated goes out in one
//! write. One that falls further behind than `--events-kept`, or whose
//! writes block for `--write-timeout` (it stopped reading), is
//! disconnected with a log line; it can resume.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::App;
use crate::error::{ApiError, lock};
use crate::http::{
    Body, EVENT_STREAM, Request, Response, Stream, Streamed, accepts_json, admits, names,
};
use crate::model::query::{bad, repeated};
use crate::model::{MAX_SAFE_INTEGER, parse_decimal};
use crate::store::feed::{Event, Next, Subscription};

/// How long a stream stays silent before a comment line keeps it open:
/// well within the idle timeouts of proxies (nginx's is 60 s).
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// The `retry:` field: how long, in milliseconds, a client waits before
/// it reconnects.
pub const RETRY_MS: u64 = 1000;

/// The `Retry-After` of a 503 when every subscriber's place is taken.
const RETRY_AFTER: &str = "5";

/// At most this many events are read from the feed at once.
const BATCH: usize = 256;

/// At most about this many bytes are read from the feed, and written, at
/// once.
const WRITE_AT: usize = 64 * 1024;

/// After sending what had accumulated, a subscriber lets more accumulate
/// for this long before it looks again (unless a quarter of
/// `--events-kept` piles up first): however many writes there are, each
/// subscriber is woken and writes a few times a second. The first event
/// after a quiet spell goes at once.
const PAUSE: Duration = Duration::from_millis(20);

/// The query of `/api/events` (check 5): `collection`, `_limit`, and the
/// `_delay` and `_` every `/api` path takes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Query {
    /// Only the events of this collection.
    collection: Option<&'static str>,
    /// At most this many events, then the stream ends.
    limit: Option<u64>,
}

impl Query {
    pub(super) fn parse(pairs: &[(String, String)]) -> Result<Query, ApiError> {
        let mut query = Query::default();
        for (name, value) in pairs {
            match name.as_str() {
                "collection" if query.collection.is_some() => return Err(repeated(name)),
                "collection" => {
                    query.collection = Some(match value.as_str() {
                        "todos" => "todos",
                        "widgets" => "widgets",
                        _ => return Err(bad(name, format!("'{value}' is not todos or widgets"))),
                    });
                }
                "_limit" if query.limit.is_some() => return Err(repeated(name)),
                "_limit" => {
                    let why = || {
                        format!("'{value}' is not a number of events from 0 to {MAX_SAFE_INTEGER}")
                    };
                    let limit = parse_decimal(value).filter(|n| *n <= MAX_SAFE_INTEGER);
                    query.limit = Some(limit.ok_or_else(|| bad(name, why()))?);
                }
                "_delay" | "_" => {}
                _ => {
                    return Err(ApiError::BadRequest {
                        detail: format!("unknown query parameter '{name}' for /api/events"),
                        hint: Some("it takes collection=todos or widgets, and _limit=N".into()),
                    });
                }
            }
        }
        Ok(query)
    }
}

/// Check 6 for `/api/events`: `Accept` must admit the event stream, or
/// JSON as every other path (its errors are JSON); else 406.
pub(super) fn check_accept(accept: &str) -> Result<(), ApiError> {
    match !accepts_json(accept) && !admits(accept, "text", "event-stream") {
        true => Err(ApiError::NotAcceptable),
        false => Ok(()),
    }
}

impl App {
    /// `GET /api/events` (see the module comment).
    pub(super) fn events(
        &self,
        req: &Request<'_>,
        pairs: &[(String, String)],
    ) -> Result<Response, ApiError> {
        let Query { collection, limit } = Query::parse(pairs)?;
        // A blank `Last-Event-ID` is none; one that is not an id we gave
        // (not a number) asks for events we do not hold.
        let after = req
            .header("Last-Event-ID")
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(|id| parse_decimal(id).unwrap_or(0));
        let live = names(req.header("Accept"), EVENT_STREAM);
        let max = match self.options.max_subscribers {
            max if live || max == 0 => max,
            _ => usize::MAX,
        };
        let Ok(subscription) = self.store.feed().subscribe(after, max, collection) else {
            let full = Response::from(ApiError::TooManySubscribers { limit: max });
            return Ok(full.with_header("Retry-After", RETRY_AFTER));
        };
        let stream = Events {
            subscription: Mutex::new(subscription),
            collection,
            limit,
            live,
            request: req.id.to_string(),
        };
        let body = Body::Stream(Stream(Arc::new(stream)));
        // nginx buffers a response unless told not to (`X-Accel-Buffering`):
        // an event would wait there for more to fill the buffer.
        Ok(Response::bytes(200, EVENT_STREAM, body).with_header("X-Accel-Buffering", "no"))
    }
}

/// One subscriber's stream.
struct Events {
    /// Only `send` uses it, once.
    subscription: Mutex<Subscription>,
    collection: Option<&'static str>,
    limit: Option<u64>,
    /// The client asked for `text/event-stream`: it stays subscribed.
    live: bool,
    /// The request's id, for the log.
    request: String,
}

impl Streamed for Events {
    fn send(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut subscription = lock(&self.subscription);
        let mut buf = opening(&subscription, self.collection);
        out.write_all(&buf)?;
        out.flush()?;
        let mut left = self.limit.unwrap_or(u64::MAX);
        // When the subscriber was last sent something, and until when it
        // lets events accumulate.
        let (mut sent, mut rest) = (Instant::now(), Instant::now());
        while left > 0 {
            let until = if self.live {
                sent + HEARTBEAT
            } else {
                Instant::now()
            };
            let most = left.min(BATCH as u64) as usize;
            buf.clear();
            match subscription.wait(&mut buf, (most, WRITE_AT), rest, until) {
                Next::Events(count) => {
                    left -= count as u64;
                    if count > 0 {
                        self.write(out, &buf)?;
                        sent = Instant::now();
                    }
                    // Stopped short of what was there: more to read at once.
                    let full = count == most || buf.len() >= WRITE_AT;
                    if self.live && !full {
                        rest = Instant::now() + PAUSE;
                    }
                }
                Next::Quiet if self.live => {
                    self.write(out, b": keep-alive\n\n")?;
                    sent = Instant::now();
                }
                Next::Quiet => {
                    let end = ": no more events held; send Accept: text/event-stream to stay subscribed\n\n";
                    return self.write(out, end.as_bytes());
                }
                Next::Behind => {
                    log::warn!(
                        target: crate::logging::LOG,
                        "request {}: a subscriber to /api/events fell more than --events-kept \
                         events behind; disconnected (it may resume with Last-Event-ID)",
                        self.request
                    );
                    return Ok(());
                }
                Next::Stopped => return Ok(()),
            }
        }
        Ok(())
    }
}

impl Events {
    /// Writes and sends `bytes`. A write that blocks for `--write-timeout`
    /// means the subscriber stopped reading: logged, and the stream ends.
    fn write(&self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        let written = out.write_all(bytes).and_then(|()| out.flush());
        if let Err(err) = &written
            && matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            )
        {
            log::warn!(
                target: crate::logging::LOG,
                "request {}: a subscriber to /api/events stopped reading for --write-timeout; \
                 disconnected (it may resume with Last-Event-ID)",
                self.request
            );
        }
        written
    }
}

/// The stream's first lines: `retry:`, then where the subscriber stands:
/// the `position` event, or the `resync` event when it missed events.
fn opening(subscription: &Subscription, collection: Option<&'static str>) -> Vec<u8> {
    let last = subscription.last();
    let mut buf = format!("retry: {RETRY_MS}\n").into_bytes();
    if subscription.missed() {
        let collections = match collection {
            Some(collection) => format!("[\"{collection}\"]"),
            None => "[\"todos\",\"widgets\"]".into(),
        };
        let resync = format!(
            "event: resync\nid: {last}\ndata: {{\"detail\":\"events after that id are no longer \
             held: read the collections again\",\"collections\":{collections}}}\n\n"
        );
        buf.extend_from_slice(resync.as_bytes());
    } else {
        let position = format!(
            "event: position\nid: {last}\ndata: {{\"detail\":\"the events after this id follow\"}}\n\n"
        );
        buf.extend_from_slice(position.as_bytes());
    }
    buf
}

/// One event as server-sent event lines (see the module comment): the
/// feed's encoder ([`Feed::encode_with`]), run once per event, when it is
/// published.
///
/// [`Feed::encode_with`]: crate::store::feed::Feed::encode_with
pub(super) fn encode(event: &Event<'_>) -> Vec<u8> {
    let change = event.change.name();
    let item = event.item.unwrap_or_default();
    let mut buf = Vec::with_capacity(128 + item.len());
    let lines = format!(
        "event: {change}\nid: {}\ndata: {{\"collection\":\"{}\"",
        event.id, event.collection
    );
    buf.extend_from_slice(lines.as_bytes());
    if let Some(id) = event.item_id {
        buf.extend_from_slice(format!(",\"id\":{id}").as_bytes());
    }
    if event.item.is_some() {
        buf.extend_from_slice(b",\"item\":");
        buf.extend_from_slice(item);
    }
    buf.extend_from_slice(b"}\n\n");
    buf
}
