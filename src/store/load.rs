//! Loading the `--data` files at start-up: the snapshot, then the journal
//! records that follow it, into the [`State`] the store starts from. (The
//! files' format is described in `journal.rs`, which writes them.)
//!
//! Loading costs about what the items cost. The snapshot's text is read
//! whole, but parsed member by member with serde's `Visitor` API rather
//! than into one `serde_json::Value`: each item is checked and stored as
//! soon as it is parsed, and its parsed form freed before the next, so no
//! second copy of the store exists at any time. (A `Value` of the whole
//! document took ten times the memory of the items it held, and, freed
//! between them, stayed in the process for good.) An item in the plain
//! case is read straight into its type (`direct.rs`). The journal is read
//! a line at a time.
//!
//! Every item is checked by the rules of a create, and the numbers by
//! their ranges: ids and `lastId` up to 2^53-1, `seq` up to [`MAX_SEQ`].
//! Whole numbers are read as a request body's are ([`exact_integer`]):
//! `7.0` and `7e0` are 7, wherever they are. A
//! name given twice (at the top, in `lastId`, in an item or a record) is
//! refused rather than letting the last one win, and so is a collection
//! with more items than `--max-items`, which would load only to refuse
//! every create. Any error stops start-up with a message naming the file
//! and the place; nothing is changed on disk, except that a last journal
//! line without its newline (a write cut short by a crash, never
//! acknowledged) is dropped with a warning and cut off.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::direct::Direct;
use super::items::Items;
use super::journal::MAX_SEQ;
use crate::error::ApiError;
use crate::model::{
    Fields, Input, MAX_SAFE_INTEGER, Members, Resource, Todo, Widget, exact_integer, json_reason,
};

/// One collection as loaded: its items by id and the highest id handed out.
#[derive(Debug)]
pub struct Loaded<T> {
    pub items: Items<T>,
    pub last_id: u64,
}

impl<T> Default for Loaded<T> {
    fn default() -> Self {
        Loaded {
            items: Items::default(),
            last_id: 0,
        }
    }
}

/// Everything in the data files at start-up.
#[derive(Debug, Default)]
pub struct State {
    pub widgets: Loaded<Widget>,
    pub todos: Loaded<Todo>,
    /// The last journal record applied.
    pub seq: u64,
}

/// The journal as start-up found it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Replayed {
    /// Its length once a torn last line, if any, is cut off.
    pub bytes: u64,
    /// Its records, those the snapshot already holds included: they count
    /// toward the next compaction.
    pub records: u64,
}

/// Loads the snapshot at `snapshot` (if there is one, and it is not empty)
/// and the journal records after it; returns the state and the journal as
/// found. Each collection may hold at most `max_items` items.
pub fn load(
    snapshot: &Path,
    journal: &Path,
    max_items: usize,
) -> Result<(State, Replayed), String> {
    let mut state = read_snapshot(snapshot, max_items)?.unwrap_or_default();
    let replayed = replay_journal(journal, &mut state)?;
    for (count, name) in [
        (state.widgets.items.len(), Widget::COLLECTION),
        (state.todos.items.len(), Todo::COLLECTION),
    ] {
        if count > max_items {
            let too_many = too_many(count, name, max_items);
            return Err(format!("{}: {too_many}", journal.display()));
        }
    }
    Ok((state, replayed))
}

/// The snapshot at `path`, or `None` when there is no such file or it is
/// empty (0 bytes). The server never leaves an empty snapshot (it writes
/// one whole or not at all), so an empty file is one made by hand, as
/// `touch db.json` does before `widgets-todos db.json`: an empty store,
/// as a missing file is.
fn read_snapshot(path: &Path, max_items: usize) -> Result<Option<State>, String> {
    let text = match std::fs::read(path) {
        Ok(text) if text.is_empty() => return Ok(None),
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
    };
    // A byte order mark, as a Windows editor saves a file edited by hand:
    // JSON text never has one, but a parser may ignore it (RFC 8259,
    // section 8.1). The server's own snapshots are written without.
    let json = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text);
    parse_snapshot(json, max_items)
        .map(Some)
        .map_err(|err| format!("{}: {err}{}", path.display(), how_to_fix(&err, path)))
}

/// For a file that is JSON but not this server's data (a json-server
/// `db.json`, most likely), a second line: the fix, the import command.
fn how_to_fix(err: &str, path: &Path) -> String {
    if err.starts_with("not valid JSON") || err.contains("--max-items") {
        return String::new();
    }
    let path = path.display();
    format!(
        "\nto serve it, fix or remove what that names; or, for a json-server db.json, keep its \
         todos and widgets with: widgets-todos import {path} --out data.json (it says what it \
         leaves out), then: widgets-todos data.json"
    )
}

/// Reads a snapshot or a hand-written fixture (`--watch` reads an edit
/// with it too).
pub(super) fn parse_snapshot(text: &[u8], max_items: usize) -> Result<State, String> {
    let mut state = State::default();
    let mut document = serde_json::Deserializer::from_slice(text);
    let parsed = document
        .deserialize_map(SnapshotVisitor {
            state: &mut state,
            max_items,
        })
        .and_then(|()| document.end());
    match parsed {
        Ok(()) => Ok(state),
        Err(err) if err.is_syntax() || err.is_eof() => Err(format!("not valid JSON: {err}")),
        // Our own messages, and wrong types; serde_json adds the place.
        Err(err) => Err(err.to_string()),
    }
}

/// The snapshot's top-level object: `seq`, `lastId`, `widgets`, `todos`,
/// each at most once, all optional.
struct SnapshotVisitor<'s> {
    state: &'s mut State,
    max_items: usize,
}

impl<'de> Visitor<'de> for SnapshotVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"an object like {"widgets": [...], "todos": [...]}"#)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let state = self.state;
        let mut seen: Vec<String> = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if seen.contains(&name) {
                return Err(de::Error::custom(format!(
                    "\"{name}\" is given more than once"
                )));
            }
            match &*name {
                "seq" => state.seq = map.next_value_seed(Whole("\"seq\"", MAX_SEQ))?,
                "lastId" => map.next_value_seed(LastIds(state))?,
                "widgets" => map.next_value_seed(ItemsSeed(&mut state.widgets, self.max_items))?,
                "todos" => map.next_value_seed(ItemsSeed(&mut state.todos, self.max_items))?,
                _ => {
                    return Err(de::Error::custom(format!(
                        "unknown collection \"{name}\" (this server keeps only widgets and todos)"
                    )));
                }
            }
            seen.push(name);
        }
        Ok(())
    }
}

/// A whole number from 0 to the maximum given, named in the error.
struct Whole(&'static str, u64);

impl<'de> DeserializeSeed<'de> for Whole {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        let Whole(name, max) = self;
        let value = Value::deserialize(deserializer)?;
        whole(&value).filter(|n| *n <= max).ok_or_else(|| {
            de::Error::custom(format!("{name} must be a whole number from 0 to {max}"))
        })
    }
}

/// `lastId`: `{"widgets": 3, "todos": 9}`, the highest id each collection
/// ever handed out (ids of deleted items included).
struct LastIds<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for LastIds<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LastIds<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"lastId as an object like {"widgets": 3, "todos": 9}"#)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let LastIds(state) = self;
        let (mut widgets, mut todos) = (None, None);
        while let Some(name) = map.next_key::<String>()? {
            let (place, label) = match &*name {
                "widgets" => (&mut widgets, "lastId.widgets"),
                "todos" => (&mut todos, "lastId.todos"),
                _ => {
                    return Err(de::Error::custom(format!(
                        "unknown member \"lastId.{name}\"; expected widgets, todos"
                    )));
                }
            };
            if place.is_some() {
                return Err(de::Error::custom(format!(
                    "{label} is given more than once"
                )));
            }
            *place = Some(map.next_value_seed(Whole(label, MAX_SAFE_INTEGER))?);
        }
        // The items may come before or after: keep the higher.
        let widgets_last = &mut state.widgets.last_id;
        *widgets_last = (*widgets_last).max(widgets.unwrap_or(0));
        let todos_last = &mut state.todos.last_id;
        *todos_last = (*todos_last).max(todos.unwrap_or(0));
        Ok(())
    }
}

/// A collection's array, each item checked and stored as it is read; at
/// most `max_items` of them (`--max-items`).
struct ItemsSeed<'s, T>(&'s mut Loaded<T>, usize);

impl<'de, T: Direct> DeserializeSeed<'de> for ItemsSeed<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Direct> Visitor<'de> for ItemsSeed<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" as an array", T::COLLECTION)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        let ItemsSeed(into, max_items) = self;
        let name = T::COLLECTION;
        let mut n = 0;
        // Each item's text as it is in the file, read directly if it
        // can be, else the general way (`direct.rs`).
        while let Some(json) = items.next_element::<&'de RawValue>()? {
            if n == max_items {
                // Count the rest, for the message, without keeping them.
                let mut count = n + 1;
                while items.next_element::<IgnoredAny>()?.is_some() {
                    count += 1;
                }
                return Err(de::Error::custom(too_many(count, name, max_items)));
            }
            let item: T = match T::direct(json.get()) {
                Some(item) => item,
                None => serde_json::from_str(json.get())
                    .map_err(|err| not_an_item::<T>(&err))
                    .and_then(|Members(fields)| from_stored(fields))
                    .map_err(|err| de::Error::custom(format!("{name}[{n}]: {err}")))?,
            };
            let id = item.id();
            if into.items.insert(id, item).is_some() {
                return Err(de::Error::custom(format!(
                    "{name}[{n}]: id {id} appears twice"
                )));
            }
            into.last_id = into.last_id.max(id);
            n += 1;
        }
        Ok(())
    }
}

/// Why a stored item could not be read as an object: it is something
/// else, or an object the parser refuses (a lone surrogate in a `\u`
/// escape, which the file's first reading lets pass, or more than 128
/// levels of nesting), said as a journal line says it.
fn not_an_item<T: Resource>(err: &serde_json::Error) -> String {
    if err.is_data() {
        format!("must be an object, like {}", T::EXAMPLE)
    } else {
        format!("not valid JSON: {}", json_reason(err))
    }
}

/// The whole number a JSON value names, by the rule of [`exact_integer`].
fn whole(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => exact_integer(n.as_str()),
        _ => None,
    }
}

/// The message for a collection that holds more than `--max-items`.
fn too_many(count: usize, name: &str, max_items: usize) -> String {
    format!(
        "{count} {name}: more than --max-items {max_items} allows; \
         start with --max-items {count} or more"
    )
}

/// Applies every journal record after `state.seq`; returns the journal as
/// found, once a torn last line, if any, is cut off. Only the bytes the
/// file holds when it is opened are read.
fn replay_journal(path: &Path, state: &mut State) -> Result<Replayed, String> {
    let shown = path.display();
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Replayed::default()),
        Err(err) => return Err(format!("cannot read {shown}: {err}")),
    };
    let length = file
        .metadata()
        .map_err(|err| format!("cannot read {shown}: {err}"))?
        .len();
    let mut lines = BufReader::new(file.take(length));
    let mut line = Vec::new();
    let mut good = 0; // bytes of whole, applied lines
    let mut line_no = 0;
    loop {
        line.clear();
        let read = lines
            .read_until(b'\n', &mut line)
            .map_err(|err| format!("cannot read {shown}: {err}"))?;
        let found = Replayed {
            bytes: good,
            records: line_no,
        };
        if read == 0 {
            return Ok(found);
        }
        line_no += 1;
        // A record is acknowledged only once its newline is on disk, so a
        // last line without one was never acknowledged: drop it unread.
        let Some(record) = line.strip_suffix(b"\n") else {
            log::warn!(target: crate::logging::LOG, "{shown}: dropping line {line_no}, cut short by a crash while it was written \
                 (never acknowledged; but if another program cut the journal there, the records that \
                 followed, acknowledged writes, are gone)"
            );
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|err| format!("cannot open {shown}: {err}"))?;
            file.set_len(good)
                .and_then(|()| file.sync_all())
                .map_err(|err| format!("cannot cut the torn line from {shown}: {err}"))?;
            return Ok(found);
        };
        // A whole line that does not load was not torn by a crash: the
        // file was damaged or edited, and guessing which records to keep
        // could lose acknowledged writes. Stop, and leave the file as is.
        apply_record(record, state).map_err(|err| format!("{shown}: line {line_no}: {err}"))?;
        good += read as u64;
    }
}

/// One journal line: `{"seq":43,"op":"put","collection":"todos","item":{...}}`.
#[derive(Deserialize)]
struct Record {
    seq: Value,
    op: Op,
    collection: Collection,
    item: Option<Members>,
    id: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Put,
    Delete,
    Clear,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Collection {
    Widgets,
    Todos,
}

fn apply_record(line: &[u8], state: &mut State) -> Result<(), String> {
    let record: Record = serde_json::from_slice(line).map_err(|err| {
        if err.is_data() {
            err.to_string()
        } else {
            format!("not valid JSON: {}", json_reason(&err))
        }
    })?;
    let Some(seq) = whole(&record.seq).filter(|seq| (1..=MAX_SEQ).contains(seq)) else {
        return Err(format!(
            "\"seq\" must be a whole number from 1 to {MAX_SEQ}"
        ));
    };
    if seq <= state.seq {
        // Already in the snapshot (a compaction was cut short, or a back-up
        // copied the journal before a newer snapshot).
        return Ok(());
    }
    if seq != state.seq + 1 {
        return Err(format!(
            "records {} to {} are missing: this journal does not follow on from the snapshot. \
             Those records were acknowledged writes, which these files no longer hold: the \
             journal was cut, replaced or deleted by another program, or one of the two files \
             was restored without the other. Restore both from one back-up (the journal copied \
             first); or, to serve the snapshot without the journal's changes, move the journal \
             aside and start again",
            state.seq + 1,
            seq - 1
        ));
    }
    match record.collection {
        Collection::Widgets => apply_to(record, &mut state.widgets)?,
        Collection::Todos => apply_to(record, &mut state.todos)?,
    }
    state.seq = seq;
    Ok(())
}

fn apply_to<T: Resource>(record: Record, into: &mut Loaded<T>) -> Result<(), String> {
    match record.op {
        Op::Put => {
            let Members(fields) = record.item.ok_or("a put without \"item\"")?;
            let item: T = from_stored(fields)?;
            let id = item.id();
            into.last_id = into.last_id.max(id);
            into.items.insert(id, item);
        }
        Op::Delete => {
            let id = record.id.ok_or("a delete without \"id\"")?;
            let id = whole(&id).ok_or("\"id\" must be a whole number")?;
            into.items.remove(id);
        }
        Op::Clear => into.items.clear(),
    }
    Ok(())
}

/// An item of the data files, held to the rules of a create: an object
/// with one `id` from 1 to 2^53-1 and the fields a create takes, each once.
/// The error names the offending fields.
pub(super) fn from_stored<T: Resource>(mut fields: Fields) -> Result<T, String> {
    let mut ids = fields
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| name == "id");
    let at = match (ids.next(), ids.next()) {
        (Some((at, _)), None) => at,
        (Some(_), Some(_)) => return Err("id is given more than once".into()),
        (None, _) => return Err("id is required".into()),
    };
    let id = match fields.remove(at).1 {
        Input::Json(value) => whole(&value),
        Input::Text(_) => None,
    };
    let Some(id) = id.filter(|id| (1..=MAX_SAFE_INTEGER).contains(id)) else {
        return Err("id must be a whole number from 1 to 2^53-1".into());
    };
    match T::parse_new(fields) {
        Ok(new) => Ok(T::create(id, new)),
        Err(ApiError::Invalid { errors, .. }) => {
            let errors: Vec<String> = errors
                .iter()
                .map(|e| format!("{} {}", e.field, e.message))
                .collect();
            Err(format!("{} {id}: {}", T::ITEM, errors.join("; ")))
        }
        Err(err) => Err(format!("{} {id}: {err}", T::ITEM)),
    }
}
