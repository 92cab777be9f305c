//! One collection of a json-server file, item by item: converted where a
//! value has one meaning here (an id or an integer given as text of
//! digits, `"1"`; a number where the field is text; `"true"` and
//! `"false"` where it is a boolean), held to the rules of a create, and
//! given an id.
//!
//! It never guesses a value: an item without a valid required field is
//! left out, and said so; so is an item that names a field twice, as a
//! `POST` of it is refused ("title is given more than once"). Items whose
//! id is not a positive integer (json-server 1.x makes ids such as
//! `"a3f9"`), or repeats one, get new ids after the highest kept, also
//! said so; when none is left after it (2^53-1 is the last), they are
//! left out, so that the file written is one the server loads.

use std::collections::HashSet;

use serde_json::Value;
use serde_json::value::RawValue;

use super::report::{Tally, counted, describe, example};
use crate::error::ApiError;
use crate::model::{
    FieldType, Fields, Input, MAX_SAFE_INTEGER, Members, Resource, exact_integer, json_reason,
};

/// One collection as imported: its items in id order, and the report's
/// lines about them.
pub(super) struct Imported<T> {
    pub items: Vec<T>,
    pub lines: Vec<String>,
}

/// The items of collection `T`, from its text in the file. The error is
/// the array's JSON, which the file's first reading has already checked.
pub(super) fn collection<T: Resource>(raw: &RawValue) -> Result<Imported<T>, serde_json::Error> {
    let name = T::COLLECTION;
    if !raw.get().starts_with('[') {
        return Ok(Imported {
            items: Vec::new(),
            lines: vec![format!("{name}: left out: not an array of items")],
        });
    }
    // Each item's text, borrowed from the file: a pointer and a length.
    let texts: Vec<&RawValue> = serde_json::from_str(raw.get())?;
    let mut collection = Collection::<T>::default();
    for (n, text) in texts.iter().enumerate() {
        collection.add(n, text);
    }
    Ok(collection.finish(texts.len()))
}

/// A collection being imported.
struct Collection<T: Resource> {
    tally: Tally,
    /// The items kept, in the file's order, and their ids.
    kept: Vec<T>,
    ids: HashSet<u64>,
    /// Items that need a new id: their place, their id as it was, and
    /// their fields.
    waiting: Vec<(String, String, T::New)>,
}

impl<T: Resource> Default for Collection<T> {
    fn default() -> Self {
        Collection {
            tally: Tally::default(),
            kept: Vec::new(),
            ids: HashSet::new(),
            waiting: Vec::new(),
        }
    }
}

impl<T: Resource> Collection<T> {
    /// Item number `n`, from its text: kept, set aside for a new id, or
    /// left out with the reason.
    fn add(&mut self, n: usize, text: &RawValue) {
        let place = format!("{}[{n}]", T::COLLECTION);
        let members = match serde_json::from_str::<Members>(text.get()) {
            Ok(Members(members)) => members,
            Err(err) => {
                let why = if err.is_data() {
                    "not an object".to_string()
                } else {
                    // What the file's first reading let pass: a lone
                    // surrogate in a `\u` escape, or more than 128 levels
                    // of nesting.
                    format!("not valid JSON: {}", json_reason(&err))
                };
                self.tally.leave_out(why, place);
                return;
            }
        };
        let id_shown = members
            .iter()
            .find(|(name, _)| name == "id")
            .map(|(_, value)| shown(value));
        let place = match &id_shown {
            Some(id) => format!("{place} (id {id})"),
            None => place,
        };
        if let Some(why) = repeated::<T>(&members) {
            self.tally.leave_out(why, place);
            return;
        }
        let mut this = Tally::default();
        let (id, fields) = fields_of::<T>(members, &mut this);
        let new = match T::parse_new(fields) {
            Ok(new) => new,
            Err(err) => {
                self.tally.leave_out(why_refused(err), place);
                return;
            }
        };
        self.tally.add(this);
        match id {
            Some(id) if self.ids.insert(id) => self.kept.push(T::create(id, new)),
            _ => {
                let id_shown = id_shown.unwrap_or_else(|| "none".into());
                self.waiting.push((place, id_shown, new));
            }
        }
    }

    /// Gives new ids to the items that need one, after the highest kept,
    /// and says what was done; `count` is how many items the file held.
    fn finish(mut self, count: usize) -> Imported<T> {
        let highest = self.kept.iter().map(T::id).max().unwrap_or(0);
        let mut next = highest;
        for (place, id_shown, new) in self.waiting {
            if next == MAX_SAFE_INTEGER {
                let why = format!(
                    "needs a new id, and none is left after {MAX_SAFE_INTEGER} \
                     (the largest integer a JSON client holds exactly)"
                );
                self.tally.leave_out(why, place);
                continue;
            }
            next += 1;
            example(&mut self.tally.new_ids, id_shown);
            self.kept.push(T::create(next, new));
        }
        self.kept.sort_unstable_by_key(T::id);
        let name = T::COLLECTION;
        let mut lines = vec![format!(
            "{name}: kept {} of {}",
            self.kept.len(),
            counted(count, "item")
        )];
        lines.extend(describe::<T>(&self.tally, highest + 1, next));
        if next == MAX_SAFE_INTEGER {
            lines.push(format!(
                "  id: {next}, the highest, is the last there is: the server will create no \
                 new {name} in this file (ids are never reused)"
            ));
        }
        Imported {
            items: self.kept,
            lines,
        }
    }
}

/// The fields of this server an item names more than once (`id` among
/// them), as a `POST` of it would be refused: `title is given more than
/// once`. A name this server lacks is left out anyway, however often.
fn repeated<T: Resource>(members: &Fields) -> Option<String> {
    let mut repeated: Vec<&str> = Vec::new();
    for (at, (name, _)) in members.iter().enumerate() {
        let ours = T::FIELDS.iter().any(|field| field.name() == name);
        if ours
            && !repeated.contains(&name.as_str())
            && members[..at].iter().any(|(before, _)| before == name)
        {
            repeated.push(name);
        }
    }
    if repeated.is_empty() {
        return None;
    }
    let each: Vec<String> = repeated
        .iter()
        .map(|name| format!("{name} is given more than once"))
        .collect();
    Some(each.join("; "))
}

/// An item's id, if it is a positive integer (or text of one), and its
/// fields this server has, converted where they convert.
fn fields_of<T: Resource>(members: Fields, tally: &mut Tally) -> (Option<u64>, Fields) {
    let mut id = None;
    let mut fields = Fields::new();
    for (name, value) in members {
        let Input::Json(value) = value else {
            continue; // `Members` makes JSON values only.
        };
        if name == "id" {
            id = whole(&value).map(|(n, from_text)| {
                if from_text {
                    example(tally.converted.entry(name).or_default(), value.to_string());
                }
                n
            });
            continue;
        }
        let Some(field) = T::FIELDS.iter().find(|field| field.name() == name) else {
            // Counted once per item, however often it names it.
            tally.unknown.insert(name, 1);
            continue;
        };
        let field_type = field.field_type();
        let converted = match (field_type, &value) {
            (FieldType::Integer, Value::String(_)) => whole(&value).map(|(n, _)| Value::from(n)),
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
            fields.push((name, Input::Json(converted)));
        } else if field_type == FieldType::Boolean && !value.is_boolean() {
            // The one optional field: left out, the item keeps its default.
            example(tally.dropped.entry(name).or_default(), value.to_string());
        } else {
            fields.push((name, Input::Json(value)));
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

/// A member's value as the file gave it, for the report.
fn shown(value: &Input) -> String {
    match value {
        Input::Json(value) => value.to_string(),
        Input::Text(text) => text.clone(),
    }
}

/// Why a create of the item is refused, every field's reason.
fn why_refused(err: ApiError) -> String {
    match err {
        ApiError::Invalid { errors, .. } => errors
            .iter()
            .map(|e| format!("{} {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
