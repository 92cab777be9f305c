//! `widgets-todos import DB.json --out DATA.json`: a json-server `db.json`
//! made into a data file this server loads.
//!
//! json-server takes any collection with any fields; this server keeps two
//! collections with fixed fields. The import keeps `todos` and `widgets`,
//! converts what has one meaning here, holds every item to the rules of a
//! create, and reports, per collection and field, what it left out and
//! why (`convert.rs`, `report.rs`). Nothing in the input is dropped without
//! a word: a name given twice at the top is refused, since JSON leaves its
//! meaning open (RFC 8259, section 4) and json-server would keep only the
//! last; an item that names a field twice is left out, as a `POST` of it
//! is refused.
//!
//! The file is read whole, but never parsed into one `serde_json::Value`
//! (which took fifteen times the file's size): the top-level object is
//! read member by member with serde's `Visitor` API, each collection kept
//! as its text in the file (a `RawValue`, which borrows that text and
//! copies nothing), and then each item is parsed, converted and dropped
//! in turn, so the import holds the file and the items it keeps, and
//! little else. The data file is written straight to disk.

mod convert;
mod report;

use std::collections::HashSet;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::model::{Resource, Todo, Widget};
use convert::Imported;
use report::counted;

/// A failed import, and the exit status it deserves.
#[derive(Debug)]
pub struct Failed(pub String);

/// The byte order mark, as UTF-8. JSON text must not start with one, but
/// a parser may ignore it (RFC 8259, section 8.1), and Windows editors
/// write it at the start of a file saved as UTF-8.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads the json-server file `from`, writes the data file `out` (which
/// must not exist yet), and returns the report for a person.
pub fn run(from: &Path, out: &Path) -> Result<String, Failed> {
    let (from_shown, out_shown) = (from.display(), out.display());
    let text =
        std::fs::read(from).map_err(|err| Failed(format!("cannot read {from_shown}: {err}")))?;
    let json = text.strip_prefix(BOM).unwrap_or(&text);
    let db = read(json).map_err(|why| Failed(format!("{from_shown}{why}")))?;
    if db.todos.is_none() && db.widgets.is_none() {
        let names: Vec<&str> = db.others.iter().map(|(name, _)| name.as_str()).collect();
        let holds = if names.is_empty() {
            "nothing".into()
        } else {
            names.join(", ")
        };
        return Err(Failed(format!(
            "{from_shown} holds neither todos nor widgets (it holds {holds}): nothing to import"
        )));
    }
    let mut report = Vec::new();
    let todos = import::<Todo>(db.todos, &from_shown, &mut report)?;
    let widgets = import::<Widget>(db.widgets, &from_shown, &mut report)?;
    let others: Vec<String> = db
        .others
        .iter()
        .map(|(name, value)| format!("{name} ({})", shape(value)))
        .collect();
    if !others.is_empty() {
        report.push(format!(
            "left out: {}: this server keeps only todos and widgets",
            others.join(", ")
        ));
    }
    write(out, &widgets, &todos).map_err(|err| match err.kind() {
        io::ErrorKind::AlreadyExists => Failed(format!(
            "{out_shown} already exists: give --out a new file, or remove it first (the import never overwrites)"
        )),
        _ => Failed(format!("cannot write {out_shown}: {err}")),
    })?;
    let mut text = format!(
        "wrote {out_shown}: {}, {} from {from_shown}\n",
        counted(todos.len(), "todo"),
        counted(widgets.len(), "widget"),
    );
    for line in report {
        text.push_str(&line);
        text.push('\n');
    }
    let most = todos.len().max(widgets.len());
    if most > 100_000 {
        text.push_str(&format!(
            "serve it with: widgets-todos {out_shown} --max-items {most}\n"
        ));
    } else {
        text.push_str(&format!("serve it with: widgets-todos {out_shown}\n"));
    }
    Ok(text)
}

/// The items of collection `T` from its text `raw` (`None` when the file
/// has no such collection), converted and checked, in id order; the
/// report's lines about them are added to `report`.
fn import<T: Resource>(
    raw: Option<&RawValue>,
    from: &impl fmt::Display,
    report: &mut Vec<String>,
) -> Result<Vec<T>, Failed> {
    let name = T::COLLECTION;
    let Some(raw) = raw else {
        report.push(format!("{name}: none in {from}"));
        return Ok(Vec::new());
    };
    let Imported { items, lines } = convert::collection::<T>(raw)
        .map_err(|err| Failed(format!("{from}: {name}: not valid JSON: {err}")))?;
    report.extend(lines);
    Ok(items)
}

/// The top-level members of a json-server file, each kept as its text.
#[derive(Default)]
struct Db<'a> {
    todos: Option<&'a RawValue>,
    widgets: Option<&'a RawValue>,
    /// Every other collection, by name, in the file's order.
    others: Vec<(String, &'a RawValue)>,
    /// The names read so far, and the first one given twice.
    names: HashSet<String>,
    repeated: Option<String>,
}

/// Reads the top-level object of a json-server file; the error completes
/// a sentence that starts with the file's name (` is not valid JSON: ...`).
fn read(json: &[u8]) -> Result<Db<'_>, String> {
    let mut db = Db::default();
    let mut document = serde_json::Deserializer::from_slice(json);
    let parsed = document
        .deserialize_map(DbVisitor(&mut db))
        .and_then(|()| document.end());
    match parsed {
        Ok(()) => Ok(db),
        Err(err) if err.is_syntax() || err.is_eof() => Err(format!(" is not valid JSON: {err}")),
        Err(err) => match db.repeated {
            Some(name) => Err(format!(
                ": \"{name}\" is given more than once (the second at line {}): JSON leaves \
                 open which one is meant, and json-server would keep only the last; \
                 keep the one you mean, then import again",
                err.line()
            )),
            None => Err(
                " is not a json-server file: it should be an object of collections, like {\"todos\": [...]}"
                    .into(),
            ),
        },
    }
}

/// Fills a [`Db`] member by member.
struct DbVisitor<'s, 'a>(&'s mut Db<'a>);

impl<'a> Visitor<'a> for DbVisitor<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"an object of collections, like {"todos": [...]}"#)
    }

    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        let DbVisitor(db) = self;
        while let Some(name) = map.next_key::<String>()? {
            if db.names.contains(&name) {
                db.repeated = Some(name);
                return Err(de::Error::custom("a name given twice"));
            }
            let value: &RawValue = map.next_value()?;
            match &*name {
                "todos" => db.todos = Some(value),
                "widgets" => db.widgets = Some(value),
                _ => db.others.push((name.clone(), value)),
            }
            db.names.insert(name);
        }
        Ok(())
    }
}

/// What a collection left out is, for the report: `2 items`, `an
/// object`, `a single value`.
fn shape(value: &RawValue) -> String {
    match value.get().as_bytes().first() {
        // Counted, not kept: `IgnoredAny` takes no memory.
        Some(b'[') => match serde_json::from_str::<Vec<IgnoredAny>>(value.get()) {
            Ok(items) => counted(items.len(), "item"),
            Err(_) => "an array".into(),
        },
        Some(b'{') => "an object".into(),
        _ => "a single value".into(),
    }
}

/// The data file: the snapshot layout, one item per line, created anew
/// and written as it is made. A file left half written by an error is
/// removed: the import made it.
fn write(out: &Path, widgets: &[Widget], todos: &[Todo]) -> io::Result<()> {
    let file = OpenOptions::new().write(true).create_new(true).open(out)?;
    write_to(file, widgets, todos).map_err(|err| match std::fs::remove_file(out) {
        Ok(()) => err,
        Err(also) => io::Error::new(
            err.kind(),
            format!("{err}, and the part written could not be removed: {also}"),
        ),
    })
}

fn write_to(file: File, widgets: &[Widget], todos: &[Todo]) -> io::Result<()> {
    let mut text = BufWriter::new(file);
    text.write_all(b"{")?;
    crate::store::write_items(&mut text, Widget::COLLECTION, widgets)?;
    text.write_all(b",\n")?;
    crate::store::write_items(&mut text, Todo::COLLECTION, todos)?;
    text.write_all(b"}\n")?;
    text.into_inner()
        .map_err(|err| err.into_error())?
        .sync_all()
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
