//! `widgets-todos import DB.json --out DATA.json`: a json-server `db.json`
//! made into a data file this server loads.
//!
//! json-server takes any collection with any fields; this server keeps two
//! collections with fixed fields. The import keeps `todos` and `widgets`,
//! converts what has one meaning here (an id or an integer given as text
//! of digits, `"1"`; a number where the field is text; `"true"` and
//! `"false"` where it is a boolean), holds every item to the rules of a
//! create, and reports, per collection and field, what it left out and
//! why. It never guesses a value: an item without a valid required field
//! is left out, and said so. Items whose id is not a positive integer
//! (json-server 1.x makes ids such as `"a3f9"`), or repeats one, get new
//! ids after the highest kept, also said so.
//!
//! The input is read whole: a json-server file is small, and the import
//! runs once, before the server, not in it.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::model::{
    FieldType, Fields, Input, MAX_SAFE_INTEGER, Resource, Todo, Widget, exact_integer,
};

/// How many examples a line of the report quotes.
const EXAMPLES: usize = 3;

/// A failed import, and the exit status it deserves.
#[derive(Debug)]
pub struct Failed(pub String);

/// Reads the json-server file `from`, writes the data file `out` (which
/// must not exist yet), and returns the report for a person.
pub fn run(from: &Path, out: &Path) -> Result<String, Failed> {
    let (from_shown, out_shown) = (from.display(), out.display());
    let text =
        std::fs::read(from).map_err(|err| Failed(format!("cannot read {from_shown}: {err}")))?;
    let db: Value = serde_json::from_slice(&text)
        .map_err(|err| Failed(format!("{from_shown} is not valid JSON: {err}")))?;
    let Value::Object(db) = db else {
        return Err(Failed(format!(
            "{from_shown} is not a json-server file: it should be an object of collections, like {{\"todos\": [...]}}"
        )));
    };
    if !db.contains_key(Todo::COLLECTION) && !db.contains_key(Widget::COLLECTION) {
        return Err(Failed(format!(
            "{from_shown} holds neither todos nor widgets (it holds {}): nothing to import",
            names(&db)
        )));
    }
    let mut report = Vec::new();
    let todos = collection::<Todo>(&db, &from_shown.to_string(), &mut report);
    let widgets = collection::<Widget>(&db, &from_shown.to_string(), &mut report);
    let others: Vec<String> = db
        .iter()
        .filter(|(name, _)| *name != Todo::COLLECTION && *name != Widget::COLLECTION)
        .map(|(name, value)| match value {
            Value::Array(items) => format!("{name} ({})", counted(items.len(), "item")),
            Value::Object(_) => format!("{name} (an object)"),
            _ => format!("{name} (a single value)"),
        })
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

/// The data file: the snapshot layout, one item per line, created anew.
fn write(out: &Path, widgets: &[Widget], todos: &[Todo]) -> io::Result<()> {
    let mut text = Vec::new();
    text.extend_from_slice(b"{");
    crate::store::write_items(&mut text, Widget::COLLECTION, widgets)?;
    text.extend_from_slice(b",\n");
    crate::store::write_items(&mut text, Todo::COLLECTION, todos)?;
    text.extend_from_slice(b"}\n");
    let mut file = OpenOptions::new().write(true).create_new(true).open(out)?;
    file.write_all(&text)?;
    file.sync_all()
}

/// What happened to the items of one collection, for the report.
#[derive(Default)]
struct Tally {
    /// Field name → values read another way (`"1"` as 1), with examples.
    converted: BTreeMap<String, (usize, Vec<String>)>,
    /// Field name → how many items had it, a field this server lacks.
    unknown: BTreeMap<String, usize>,
    /// Field name → values left out of items kept (an optional field with
    /// a value that is not one), with examples.
    dropped: BTreeMap<String, (usize, Vec<String>)>,
    /// Why → the items left out for it.
    left_out: BTreeMap<String, Vec<String>>,
    /// Ids that were not positive integers, or repeated one, with examples.
    new_ids: (usize, Vec<String>),
}

impl Tally {
    /// Adds what was done to one item kept.
    fn add(&mut self, item: Tally) {
        for (field, (count, examples)) in item.converted {
            let (total, kept) = self.converted.entry(field).or_default();
            *total += count;
            kept.extend(
                examples
                    .into_iter()
                    .take(EXAMPLES - kept.len().min(EXAMPLES)),
            );
        }
        for (field, count) in item.unknown {
            *self.unknown.entry(field).or_default() += count;
        }
        for (field, (count, examples)) in item.dropped {
            let (total, kept) = self.dropped.entry(field).or_default();
            *total += count;
            kept.extend(
                examples
                    .into_iter()
                    .take(EXAMPLES - kept.len().min(EXAMPLES)),
            );
        }
    }
}

/// The items of collection `T` in `db`, converted and checked, in id
/// order; what was done is added to `report`.
fn collection<T: Resource>(
    db: &Map<String, Value>,
    from: &str,
    report: &mut Vec<String>,
) -> Vec<T> {
    let name = T::COLLECTION;
    let items = match db.get(name) {
        None => {
            report.push(format!("{name}: none in {from}"));
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            report.push(format!("{name}: left out: not an array of items"));
            return Vec::new();
        }
    };
    let mut tally = Tally::default();
    // Items with an id of their own, then those that need one.
    let mut kept: BTreeMap<u64, T> = BTreeMap::new();
    let mut waiting: Vec<T::New> = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let place = format!("{name}[{n}]");
        let Value::Object(members) = item else {
            tally
                .left_out
                .entry("not an object".into())
                .or_default()
                .push(place);
            continue;
        };
        let mut this = Tally::default();
        let (id, fields) = fields_of::<T>(members, &mut this);
        let new = match T::parse_new(fields) {
            Ok(new) => {
                tally.add(this);
                new
            }
            Err(err) => {
                let why = match err {
                    ApiError::Invalid { errors, .. } => errors
                        .iter()
                        .map(|e| format!("{} {}", e.field, e.message))
                        .collect::<Vec<_>>()
                        .join("; "),
                    other => other.to_string(),
                };
                let place = match members.get("id") {
                    Some(id) => format!("{place} (id {id})"),
                    None => place,
                };
                tally.left_out.entry(why).or_default().push(place);
                continue;
            }
        };
        match id.filter(|id| !kept.contains_key(id)) {
            Some(id) => {
                kept.insert(id, T::create(id, new));
            }
            None => {
                let shown = members.get("id").map_or("none".into(), Value::to_string);
                example(&mut tally.new_ids, shown);
                waiting.push(new);
            }
        }
    }
    let mut next = kept.keys().next_back().copied().unwrap_or(0);
    let first_new = next + 1;
    for new in waiting {
        next += 1;
        kept.insert(next, T::create(next, new));
    }
    report.push(format!(
        "{name}: kept {} of {}",
        kept.len(),
        counted(items.len(), "item")
    ));
    report.extend(describe::<T>(&tally, first_new, next));
    kept.into_values().collect()
}

/// An item's id, if it is a positive integer (or text of one), and its
/// fields this server has, converted where they convert.
fn fields_of<T: Resource>(
    members: &Map<String, Value>,
    tally: &mut Tally,
) -> (Option<u64>, Fields) {
    let mut id = None;
    let mut fields = Fields::new();
    for (name, value) in members {
        if name == "id" {
            id = whole(value).map(|(n, from_text)| {
                if from_text {
                    example(
                        tally.converted.entry("id".into()).or_default(),
                        value.to_string(),
                    );
                }
                n
            });
            continue;
        }
        let Some((_, kind)) = T::FIELDS.iter().find(|(field, _)| field == name) else {
            *tally.unknown.entry(name.clone()).or_default() += 1;
            continue;
        };
        let converted = match (kind, value) {
            (FieldType::Integer, Value::String(_)) => whole(value).map(|(n, _)| Value::from(n)),
            (FieldType::Text, Value::Number(n)) => Some(Value::String(n.to_string())),
            (FieldType::Boolean, Value::String(s)) if s == "true" || s == "false" => {
                Some(Value::Bool(s == "true"))
            }
            _ => None,
        };
        if let Some(converted) = converted {
            example(
                tally.converted.entry(name.clone()).or_default(),
                value.to_string(),
            );
            fields.push((name.clone(), Input::Json(converted)));
        } else if *kind == FieldType::Boolean && !value.is_boolean() {
            // The one optional field: left out, the item keeps its default.
            example(
                tally.dropped.entry(name.clone()).or_default(),
                value.to_string(),
            );
        } else {
            fields.push((name.clone(), Input::Json(value.clone())));
        }
    }
    (id, fields)
}

/// A whole number from 1 to 2^53-1, as a JSON number (`7`, `7.0`) or as
/// text of decimal digits (`"7"`, `"007"`); with whether it was text.
fn whole(value: &Value) -> Option<(u64, bool)> {
    let (n, from_text) = match value {
        Value::Number(n) => (exact_integer(n.as_str()), false),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            (s.parse::<u64>().ok(), true)
        }
        _ => (None, false),
    };
    n.filter(|n| (1..=MAX_SAFE_INTEGER).contains(n))
        .map(|n| (n, from_text))
}

/// The report's lines for one collection, each indented under it.
fn describe<T: Resource>(tally: &Tally, first_new: u64, last_new: u64) -> Vec<String> {
    let fields: Vec<&str> = T::FIELDS.iter().skip(1).map(|(name, _)| *name).collect();
    let mut lines = Vec::new();
    let (count, examples) = &tally.new_ids;
    if *count > 0 {
        let ids = if first_new == last_new {
            format!("the new id {first_new}")
        } else {
            format!("new ids {first_new} to {last_new}")
        };
        lines.push(format!(
            "  id: gave {ids} to {} whose id is not a positive integer or repeats one ({})",
            counted(*count, "item"),
            examples.join(", ")
        ));
    }
    for (field, (count, examples)) in &tally.converted {
        let one = *count == 1;
        let how = match T::FIELDS.iter().find(|(name, _)| name == field) {
            Some((_, FieldType::Text)) if one => "from a number to text",
            Some((_, FieldType::Text)) => "from numbers to text",
            Some((_, FieldType::Boolean)) => "from text to true or false",
            _ if one => "from text to a number",
            _ => "from text to numbers",
        };
        lines.push(format!(
            "  {field}: converted {} {how} ({})",
            counted(*count, "value"),
            examples.join(", ")
        ));
    }
    for (field, count) in &tally.unknown {
        lines.push(format!(
            "  {field}: left out of {}: not a field of a {} (its fields: {})",
            counted(*count, "item"),
            T::KIND,
            fields.join(", ")
        ));
    }
    for (field, (count, examples)) in &tally.dropped {
        lines.push(format!(
            "  {field}: left out of {}, which are then false: not true or false ({})",
            counted(*count, "item"),
            examples.join(", ")
        ));
    }
    for (why, places) in &tally.left_out {
        let mut shown: Vec<&str> = places.iter().take(EXAMPLES).map(String::as_str).collect();
        let more = places.len() - shown.len();
        let rest = format!("and {more} more");
        if more > 0 {
            shown.push(&rest);
        }
        lines.push(format!(
            "  left out {}: {why}: {}",
            counted(places.len(), "item"),
            shown.join(", ")
        ));
    }
    lines
}

/// Counts one more, keeping the first few examples.
fn example((count, examples): &mut (usize, Vec<String>), shown: String) {
    *count += 1;
    if examples.len() < EXAMPLES {
        examples.push(shown);
    }
}

/// The collections of a json-server file, by name, for a message.
fn names(db: &Map<String, Value>) -> String {
    if db.is_empty() {
        return "nothing".into();
    }
    db.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// `1 item`, `2 items`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import<T: Resource>(json: &str) -> (Vec<T>, String) {
        let Ok(Value::Object(db)) = serde_json::from_str(json) else {
            panic!("not an object: {json}");
        };
        let mut report = Vec::new();
        let items = collection::<T>(&db, "db.json", &mut report);
        (items, report.join("\n"))
    }

    #[test]
    fn widgets_convert_numbers_to_text_and_repeated_ids_get_new_ones() {
        let (widgets, report) = import::<Widget>(
            r#"{"widgets": [{"id": 2, "price": 10, "quality": "good"},
                            {"id": 2, "price": "$5", "quality": "fine"},
                            {"id": 7.0, "price": "$1", "quality": "ok", "color": "red"},
                            {"price": "$3", "quality": "ok"},
                            "a widget"]}"#,
        );
        let ids: Vec<(u64, &str)> = widgets.iter().map(|w| (w.id, &*w.price)).collect();
        assert_eq!(ids, [(2, "10"), (7, "$1"), (8, "$5"), (9, "$3")]);
        for line in [
            "widgets: kept 4 of 5 items",
            "id: gave new ids 8 to 9 to 2 items whose id is not a positive integer or repeats one (2, none)",
            "price: converted 1 value from a number to text (10)",
            "color: left out of 1 item: not a field of a widget (its fields: price, quality)",
            "left out 1 item: not an object: widgets[4]",
        ] {
            assert!(report.contains(line), "{line}:\n{report}");
        }
    }

    #[test]
    fn a_boolean_that_is_not_one_is_left_out_and_values_are_never_guessed() {
        let (todos, report) = import::<Todo>(
            r#"{"todos": [{"id": "01", "userId": "2", "title": "a", "completed": "yes"},
                          {"id": 2, "userId": "two", "title": "b"},
                          {"id": 3, "userId": 1, "title": ""},
                          {"id": "9007199254740992", "userId": 1, "title": "c"}]}"#,
        );
        let kept: Vec<(u64, u64, bool)> = todos
            .iter()
            .map(|t| (t.id, t.user_id, t.completed))
            .collect();
        assert_eq!(kept, [(1, 2, false), (2, 1, false)]);
        for line in [
            r#"completed: left out of 1 item, which are then false: not true or false ("yes")"#,
            "left out 1 item: userId must be an integer from 1 to 9007199254740991: todos[1] (id 2)",
            "left out 1 item: title must be 1 to 1000 characters long: todos[2] (id 3)",
            r#"id: gave the new id 2 to 1 item whose id is not a positive integer or repeats one ("9007199254740992")"#,
        ] {
            assert!(report.contains(line), "{line}:\n{report}");
        }
    }

    #[test]
    fn a_collection_that_is_missing_or_not_an_array_is_said() {
        assert!(import::<Todo>("{}").1.contains("todos: none in db.json"));
        let (todos, report) = import::<Todo>(r#"{"todos": {"1": {}}}"#);
        assert!(todos.is_empty());
        assert!(report.contains("todos: left out: not an array of items"));
    }
}
