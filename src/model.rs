//! What widgets and todos are, and the rules a request body must follow to
//! make or change one.
//!
//! A body arrives as named [`Fields`] (decoded from JSON or a form by
//! `http`). A [`Validator`] takes them out one by one, each by a typed
//! getter that checks it and records what is wrong, so that a 422 lists
//! every offending field at once. [`Widget`] and [`Todo`] each say only what
//! differs: their fields, their rules, and how an update applies
//! ([`Resource`]). JSON values must have the right JSON type; form values
//! are text, so `userId=7` and `completed=true` are read here with the same
//! rules.
//!
//! Items keep their text in a [`Str`]: up to 30 bytes in place, not in a
//! heap block of its own, which most titles and prices fit: a heap block
//! per field costs more than the field (scripts/PERFORMANCE.md, "Memory").

pub mod generate;
pub mod query;
pub mod spelling;

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{ApiError, FieldError};

/// The largest integer every JSON client holds exactly: 2^53 - 1.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A field's value as decoded: JSON keeps its type, a form gives text.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Json(Value),
    Text(String),
}

/// The members of a body object, in the order sent, duplicates kept so that
/// validation can report them (serde_json's own maps keep only the last).
pub type Fields = Vec<(String, Input)>;

/// A JSON object read member by member into [`Fields`], duplicates kept.
/// Request bodies and the items of the data files are read with it.
pub struct Members(pub Fields);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut fields = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, Value>()? {
                    fields.push((name, Input::Json(value)));
                }
                Ok(Members(fields))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// serde_json's message without its own place (" at line L column C"):
/// the caller names the place, in the body or in the file.
pub fn json_reason(err: &serde_json::Error) -> String {
    let mut message = err.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    message
}

/// Decimal digits in canonical form: no sign, no leading zero, no spaces.
/// Ids in paths, and integers in forms and queries.
pub fn parse_decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.as_bytes().iter().all(u8::is_ascii_digit)
        && !(text.len() > 1 && text.starts_with('0'));
    if canonical { text.parse().ok() } else { None }
}

/// The integer a JSON number's text names, if it names one not below 0:
/// `7`, `7.0`, `7e0`, `0.7e1`, `700e-2` are all 7; `7.5` and `-7` are none.
/// The digits are read as digits times a power of ten, and the power must
/// not leave a fraction.
pub fn exact_integer(text: &str) -> Option<u64> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let sent = whole.as_bytes().iter().chain(fraction.as_bytes());
    if whole.is_empty() || !sent.clone().all(u8::is_ascii_digit) {
        return None;
    }
    // The number is its digits (the whole part's, then the fraction's)
    // times ten to the power `scale`; trailing zeros move into the power.
    let significant = match fraction.trim_end_matches('0') {
        "" => whole.trim_end_matches('0').len(),
        kept => whole.len() + kept.len(),
    };
    let zeros = (whole.len() + fraction.len() - significant) as i64;
    let scale = exponent
        .checked_sub(fraction.len() as i64)?
        .checked_add(zeros)?;
    if scale < 0 && significant > 0 {
        return None;
    }
    let mut n: u64 = 0;
    for digit in sent.take(significant) {
        n = n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
    }
    for _ in 0..scale.max(0) {
        if n == 0 {
            break;
        }
        n = n.checked_mul(10)?;
    }
    Some(n)
}

/// An item the API serves, a widget or a todo: its names and its rules.
pub trait Resource: Serialize + Clone + Send + Sync + Queryable + 'static {
    /// Singular name for messages: "todo".
    const ITEM: &'static str;
    /// The collection's name: "todos" (its path is `/api/todos`).
    const COLLECTION: &'static str;
    /// A valid create body, for hints.
    const EXAMPLE: &'static str;
    /// A checked create body.
    type New;
    /// A checked update body: the fields to change.
    type Patch;

    /// Checks a create body; 422 lists every offending field.
    fn parse_new(fields: Fields) -> Result<Self::New, ApiError>;
    /// Checks an update body for the item `id`; an `id` member must match it.
    fn parse_patch(fields: Fields, id: u64) -> Result<Self::Patch, ApiError>;
    /// The item a create makes, with the id the store assigned.
    fn create(id: u64, new: Self::New) -> Self;
    /// Changes the fields the patch names; the others keep their value.
    fn apply(&mut self, patch: Self::Patch);
    fn id(&self) -> u64;
}

/// The type of a field, which decides how a query value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Integer,
    Text,
    Boolean,
}

/// A field's value in an item, for filtering and sorting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FieldValue<'a> {
    Integer(u64),
    Text(&'a str),
    Boolean(bool),
}

/// A field as the list query language reads it: its name, and how to read
/// its value in an item, which says its type too (how a query's value for
/// it is read).
pub enum Field<T: 'static> {
    Integer(&'static str, fn(&T) -> u64),
    Text(&'static str, fn(&T) -> &str),
    Boolean(&'static str, fn(&T) -> bool),
}

impl<T> Field<T> {
    pub fn name(&self) -> &'static str {
        match self {
            Field::Integer(name, _) | Field::Text(name, _) | Field::Boolean(name, _) => name,
        }
    }

    pub fn field_type(&self) -> FieldType {
        match self {
            Field::Integer(..) => FieldType::Integer,
            Field::Text(..) => FieldType::Text,
            Field::Boolean(..) => FieldType::Boolean,
        }
    }

    pub fn value<'a>(&self, item: &'a T) -> FieldValue<'a> {
        match self {
            Field::Integer(_, value) => FieldValue::Integer(value(item)),
            Field::Text(_, value) => FieldValue::Text(value(item)),
            Field::Boolean(_, value) => FieldValue::Boolean(value(item)),
        }
    }
}

/// What the list query language (`query.rs`) needs to know of a resource.
pub trait Queryable: Sized + 'static {
    /// Every field, `id` first.
    const FIELDS: &'static [Field<Self>];

    /// The value of field number `index` in [`Queryable::FIELDS`].
    fn field(&self, index: usize) -> FieldValue<'_> {
        Self::FIELDS[index].value(self)
    }
}

/// Whether a field must be present (create) or may be left out (update).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    Optional,
}

/// Takes a body's fields out one by one as typed values (module comment).
pub struct Validator {
    subject: &'static str,
    /// Each name sent, with its value; `None` for one sent twice or more.
    fields: BTreeMap<String, Option<Input>>,
    errors: Vec<FieldError>,
}

impl Validator {
    /// Records duplicate and unknown names up front. `id` gets its own
    /// message when it is not among `known`, since it is the one field a
    /// client may reasonably think it can send on create. An unknown name
    /// close to a known one (`userid`, `titel`) gets a "did you mean".
    pub fn new(subject: &'static str, sent: Fields, known: &[&str]) -> Validator {
        let mut errors = Vec::new();
        let mut fields: BTreeMap<String, Option<Input>> = BTreeMap::new();
        for (name, value) in sent {
            if let Some(first) = fields.get_mut(&name) {
                if first.take().is_some() {
                    errors.push(FieldError::new(&name, "is given more than once"));
                }
                continue;
            }
            if !known.contains(&name.as_str()) {
                let fields = known.join(", ");
                let message = if name == "id" {
                    "is assigned by the server; leave it out".to_string()
                } else if let Some(meant) = spelling::closest(&name, known) {
                    format!(
                        "is not a field of a {subject}; did you mean {meant}? (fields: {fields})"
                    )
                } else {
                    format!("is not a field of a {subject} (fields: {fields})")
                };
                errors.push(FieldError::new(&name, message));
            }
            fields.insert(name, Some(value));
        }
        Validator {
            subject,
            fields,
            errors,
        }
    }

    /// Takes a field's value out. `None` when absent, or when repeated (its
    /// error is already recorded, so it must not also count as missing).
    fn take(&mut self, name: &'static str, need: Need) -> Option<Input> {
        match self.fields.remove(name) {
            Some(value) => value,
            None => {
                if matches!(need, Need::Required) {
                    self.errors.push(FieldError::new(name, "is required"));
                }
                None
            }
        }
    }

    fn reject<T>(&mut self, name: &'static str, message: impl Into<String>) -> Option<T> {
        self.errors.push(FieldError::new(name, message));
        None
    }

    /// A string of 1 to `max` characters (Unicode scalar values) that is not
    /// only whitespace. Kept exactly as sent.
    pub fn string(&mut self, name: &'static str, max: usize, need: Need) -> Option<String> {
        let text = match self.take(name, need)? {
            Input::Json(Value::String(s)) | Input::Text(s) => s,
            Input::Json(Value::Null) => return self.reject(name, "must be a string, not null"),
            Input::Json(_) => return self.reject(name, "must be a string"),
        };
        match text_rule(&text, max) {
            Ok(()) => Some(text),
            Err(why) => self.reject(name, why),
        }
    }

    /// An integer from 1 to [`MAX_SAFE_INTEGER`]: a JSON number that names
    /// an integer, or decimal digits without a leading zero in a form.
    ///
    /// As in JSON Schema (and so the OpenAPI document), `7.0` and `7e0` are
    /// the integer 7; `7.5` is no integer. The number is read from its text
    /// ([`exact_integer`]), never through an `f64`, which cannot say which
    /// integer, if any, the text named: `9007199254740991.4` and
    /// `9007199254740991.0` read as the same `f64`.
    pub fn integer(&mut self, name: &'static str, need: Need) -> Option<u64> {
        let value = match self.take(name, need)? {
            Input::Json(Value::Number(n)) => exact_integer(n.as_str()),
            Input::Text(text) => parse_decimal(&text),
            Input::Json(_) => None,
        };
        match value {
            Some(n) if (1..=MAX_SAFE_INTEGER).contains(&n) => Some(n),
            _ => self.reject(
                name,
                format!("must be an integer from 1 to {MAX_SAFE_INTEGER}"),
            ),
        }
    }

    /// `true` or `false`: a JSON boolean, or those exact words in a form.
    pub fn boolean(&mut self, name: &'static str, need: Need) -> Option<bool> {
        match self.take(name, need)? {
            Input::Json(Value::Bool(b)) => Some(b),
            Input::Text(text) if text == "true" => Some(true),
            Input::Text(text) if text == "false" => Some(false),
            _ => self.reject(name, "must be true or false"),
        }
    }

    /// An `id` in an update body must name the item in the path.
    pub fn matching_id(&mut self, path_id: u64) {
        if let Some(id) = self.integer("id", Need::Optional)
            && id != path_id
        {
            self.errors.push(FieldError::new(
                "id",
                format!("must equal the id in the path ({path_id}) or be left out"),
            ));
        }
    }

    /// 422 listing every error recorded, or `Ok` when there were none.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            return Ok(());
        }
        Err(ApiError::Invalid {
            subject: self.subject,
            errors: self.errors,
        })
    }
}

/// The 422 for an update that names no field to change.
fn nothing_to_update(subject: &'static str, fields: &[&str]) -> ApiError {
    ApiError::Invalid {
        subject,
        errors: vec![FieldError::new(
            "",
            format!("an update must set at least one of: {}", fields.join(", ")),
        )],
    }
}

/// Bytes of text a [`Str`] keeps in place: with its length and the enum's
/// tag, 32 bytes, as much as a `String` plus a few.
pub const INLINE: usize = 30;

/// An item's text: inline up to [`INLINE`] bytes, on the heap beyond.
#[derive(Clone, PartialEq, Eq)]
pub enum Str {
    Inline(u8, [u8; INLINE]),
    Heap(Box<str>),
}

impl From<String> for Str {
    fn from(text: String) -> Str {
        if text.len() > INLINE {
            return Str::Heap(text.into_boxed_str());
        }
        let mut bytes = [0; INLINE];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Str::Inline(text.len() as u8, bytes)
    }
}

impl std::ops::Deref for Str {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            // Copied whole from a `String`, so always UTF-8.
            Str::Inline(len, bytes) => std::str::from_utf8(&bytes[..*len as usize]).unwrap_or(""),
            Str::Heap(text) => text,
        }
    }
}

impl std::fmt::Debug for Str {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

/// The most characters a widget's `price` and `quality` may have.
pub const MAX_TEXT: usize = 100;

/// A widget: `{"id": 1, "price": "$10", "quality": "good"}`. A create
/// needs both fields; an update sets one or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Widget {
    pub id: u64,
    /// Free text holding an amount and a currency sign: "$10", "10 €".
    pub price: Str,
    /// A descriptive label: "good".
    pub quality: Str,
}

/// A widget's update: the fields to change. A create sets them all.
pub struct WidgetPatch {
    price: Option<String>,
    quality: Option<String>,
}

impl Queryable for Widget {
    const FIELDS: &'static [Field<Widget>] = &[
        Field::Integer("id", |widget| widget.id),
        Field::Text("price", |widget| &widget.price),
        Field::Text("quality", |widget| &widget.quality),
    ];
}

impl Resource for Widget {
    const ITEM: &'static str = "widget";
    const COLLECTION: &'static str = "widgets";
    const EXAMPLE: &'static str = r#"{"price": "$10", "quality": "good"}"#;
    type New = (String, String);
    type Patch = WidgetPatch;

    fn parse_new(fields: Fields) -> Result<(String, String), ApiError> {
        let mut v = Validator::new(Self::ITEM, fields, &["price", "quality"]);
        let price = v.string("price", MAX_TEXT, Need::Required);
        let quality = v.string("quality", MAX_TEXT, Need::Required);
        v.finish()?;
        // `finish` has reported a missing field, so both are set.
        price.zip(quality).ok_or(ApiError::Internal)
    }

    fn parse_patch(fields: Fields, id: u64) -> Result<WidgetPatch, ApiError> {
        let mut v = Validator::new(Self::ITEM, fields, &["id", "price", "quality"]);
        v.matching_id(id);
        let price = v.string("price", MAX_TEXT, Need::Optional);
        let quality = v.string("quality", MAX_TEXT, Need::Optional);
        v.finish()?;
        if price.is_none() && quality.is_none() {
            return Err(nothing_to_update(Self::ITEM, &["price", "quality"]));
        }
        Ok(WidgetPatch { price, quality })
    }

    fn create(id: u64, (price, quality): (String, String)) -> Widget {
        let (price, quality) = (price.into(), quality.into());
        Widget { id, price, quality }
    }

    fn apply(&mut self, patch: WidgetPatch) {
        if let Some(price) = patch.price {
            self.price = price.into();
        }
        if let Some(quality) = patch.quality {
            self.quality = quality.into();
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}

/// The most characters a todo's title may have.
pub const MAX_TITLE: usize = 1000;

/// A todo: `{"id": 1, "userId": 1, "title": "Buy milk", "completed":
/// false}`. A create needs `userId` and `title`; `completed` defaults to
/// `false`. An update sets any of the three.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub id: u64,
    /// The owner: 1 to 2^53-1, so every JSON client holds it exactly.
    pub user_id: u64,
    pub title: Str,
    pub completed: bool,
}

/// A todo's update: the fields to change.
pub struct TodoPatch {
    user_id: Option<u64>,
    title: Option<String>,
    completed: Option<bool>,
}

impl Queryable for Todo {
    const FIELDS: &'static [Field<Todo>] = &[
        Field::Integer("id", |todo| todo.id),
        Field::Integer("userId", |todo| todo.user_id),
        Field::Text("title", |todo| &todo.title),
        Field::Boolean("completed", |todo| todo.completed),
    ];
}

impl Resource for Todo {
    const ITEM: &'static str = "todo";
    const COLLECTION: &'static str = "todos";
    const EXAMPLE: &'static str = r#"{"userId": 1, "title": "Buy milk"}"#;
    type New = (u64, String, bool);
    type Patch = TodoPatch;

    fn parse_new(fields: Fields) -> Result<(u64, String, bool), ApiError> {
        let mut v = Validator::new(Self::ITEM, fields, &["userId", "title", "completed"]);
        let user_id = v.integer("userId", Need::Required);
        let title = v.string("title", MAX_TITLE, Need::Required);
        let completed = v.boolean("completed", Need::Optional);
        v.finish()?;
        // `finish` has reported a missing field, so both are set.
        let (user_id, title) = user_id.zip(title).ok_or(ApiError::Internal)?;
        Ok((user_id, title, completed.unwrap_or(false)))
    }

    fn parse_patch(fields: Fields, id: u64) -> Result<TodoPatch, ApiError> {
        const KNOWN: &[&str] = &["id", "userId", "title", "completed"];
        let mut v = Validator::new(Self::ITEM, fields, KNOWN);
        v.matching_id(id);
        let user_id = v.integer("userId", Need::Optional);
        let title = v.string("title", MAX_TITLE, Need::Optional);
        let completed = v.boolean("completed", Need::Optional);
        v.finish()?;
        if user_id.is_none() && title.is_none() && completed.is_none() {
            return Err(nothing_to_update(Self::ITEM, &KNOWN[1..]));
        }
        Ok(TodoPatch {
            user_id,
            title,
            completed,
        })
    }

    fn create(id: u64, (user_id, title, completed): (u64, String, bool)) -> Todo {
        let title = title.into();
        Todo {
            id,
            user_id,
            title,
            completed,
        }
    }

    fn apply(&mut self, patch: TodoPatch) {
        if let Some(user_id) = patch.user_id {
            self.user_id = user_id;
        }
        if let Some(title) = patch.title {
            self.title = title.into();
        }
        if let Some(completed) = patch.completed {
            self.completed = completed;
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}

/// The rule of every text field: 1 to `max` characters, not only
/// whitespace; `Err` says which part is broken. The loader's direct read
/// (`store/direct.rs`) keeps to it too.
pub(crate) fn text_rule(text: &str, max: usize) -> Result<(), String> {
    let chars = text.chars().count();
    if chars == 0 || chars > max {
        Err(format!("must be 1 to {max} characters long"))
    } else if text.trim().is_empty() {
        Err("must not be only whitespace".into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
