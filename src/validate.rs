//! Turning decoded body fields into typed values, collecting every problem.
//!
//! A [`Validator`] is built from the fields of one body and the names the
//! resource knows. Each typed getter takes one field out, checks it, and
//! records an error when it is wrong, so a 422 lists every offending field
//! at once instead of the first. JSON values must have the right JSON type;
//! form values are text, so `userId=7` and `completed=true` are converted
//! here with the same rules.

use serde_json::Value;

use crate::error::{ApiError, FieldError};
use crate::request::{Fields, Input};

/// The largest integer every JSON client holds exactly: 2^53 - 1.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Whether a field must be present (create) or may be left out (update).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    Optional,
}

pub struct Validator<'a> {
    kind: &'static str,
    fields: Fields<'a>,
    /// Names sent more than once: reported once, never read.
    repeated: Vec<String>,
    errors: Vec<FieldError>,
}

impl<'a> Validator<'a> {
    /// Records duplicate and unknown names up front. `id` gets its own
    /// message when it is not among `known`, since it is the one field a
    /// client may reasonably think it can send on create.
    pub fn new(kind: &'static str, fields: Fields<'a>, known: &[&str]) -> Validator<'a> {
        let mut errors = Vec::new();
        let mut repeated: Vec<String> = Vec::new();
        for (i, (name, _)) in fields.iter().enumerate() {
            let first = fields.iter().position(|(n, _)| n == name) == Some(i);
            if !first {
                if !repeated.iter().any(|r| r == name) {
                    errors.push(FieldError::new(&**name, "is given more than once"));
                    repeated.push(name.to_string());
                }
            } else if !known.contains(&&**name) {
                let message = if name == "id" {
                    "is assigned by the server; leave it out".to_string()
                } else {
                    format!("is not a field of a {kind} (fields: {})", known.join(", "))
                };
                errors.push(FieldError::new(&**name, message));
            }
        }
        Validator {
            kind,
            fields,
            repeated,
            errors,
        }
    }

    /// Whether the body had no fields at all.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Takes a field's value out. `None` when absent, or when repeated (its
    /// error is already recorded, so it must not also count as missing).
    fn take(&mut self, name: &'static str, need: Need) -> Option<Input> {
        if self.repeated.iter().any(|r| r == name) {
            return None;
        }
        match self.fields.iter().position(|(n, _)| n == name) {
            Some(i) => Some(self.fields.swap_remove(i).1),
            None => {
                if need == Need::Required {
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
        let chars = text.chars().count();
        if chars == 0 || chars > max {
            self.reject(name, format!("must be 1 to {max} characters long"))
        } else if text.trim().is_empty() {
            self.reject(name, "must not be only whitespace")
        } else {
            Some(text)
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
            _ => None,
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
            Ok(())
        } else {
            Err(ApiError::Invalid {
                kind: self.kind,
                errors: self.errors,
            })
        }
    }
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
    let digits_only = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) {
        return None;
    }
    // The number is `digits` times ten to the power `scale`.
    let mut digits = format!("{whole}{fraction}");
    let mut scale = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    while scale < 0 && digits.ends_with('0') {
        digits.pop();
        scale += 1;
    }
    if scale < 0 {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some(0);
    }
    // Beyond 20 digits no u64 is left to name.
    if i64::try_from(digits.len()).ok()? + scale > 20 {
        return None;
    }
    let mut n: u64 = digits.parse().ok()?;
    for _ in 0..scale {
        n = n.checked_mul(10)?;
    }
    Some(n)
}

/// Decimal digits in canonical form: no sign, no leading zero, no spaces.
/// Also used for ids in paths.
pub fn parse_decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && !(text.len() > 1 && text.starts_with('0'));
    if canonical { text.parse().ok() } else { None }
}

/// The 422 for an update that names no field to change.
pub fn nothing_to_update(kind: &'static str, fields: &[&str]) -> ApiError {
    ApiError::Invalid {
        kind,
        errors: vec![FieldError::new(
            "",
            format!("an update must set at least one of: {}", fields.join(", ")),
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::decode_json;

    fn validator<'a>(json: &'a str, known: &[&str]) -> Validator<'a> {
        Validator::new("todo", decode_json(json.as_bytes()).unwrap(), known)
    }

    fn fields_in_error(v: Validator<'_>) -> Vec<String> {
        match v.finish() {
            Err(ApiError::Invalid { errors, .. }) => errors.into_iter().map(|e| e.field).collect(),
            other => panic!("expected 422, got {other:?}"),
        }
    }

    #[test]
    fn collects_every_error() {
        let mut v = validator(
            r#"{"title": "", "extra": 1, "id": 3, "done": 2}"#,
            &["title", "userId"],
        );
        assert_eq!(v.string("title", 10, Need::Required), None);
        assert_eq!(v.integer("userId", Need::Required), None);
        assert_eq!(
            fields_in_error(v),
            ["extra", "id", "done", "title", "userId"]
        );
    }

    #[test]
    fn duplicates_are_reported_once_and_not_as_missing() {
        let mut v = validator(r#"{"title": "a", "title": "b", "title": "c"}"#, &["title"]);
        assert_eq!(v.string("title", 10, Need::Required), None);
        assert_eq!(fields_in_error(v), ["title"]);
    }

    #[test]
    fn strings() {
        let mut v = validator(
            r#"{"a": " x ", "b": "   ", "c": null, "d": 5, "e": "ééé"}"#,
            &["a", "b", "c", "d", "e"],
        );
        assert_eq!(v.string("a", 3, Need::Required).as_deref(), Some(" x "));
        assert_eq!(v.string("b", 3, Need::Required), None);
        assert_eq!(v.string("c", 3, Need::Required), None);
        assert_eq!(v.string("d", 3, Need::Required), None);
        assert_eq!(v.string("e", 3, Need::Required).as_deref(), Some("ééé"));
        assert_eq!(fields_in_error(v), ["b", "c", "d"]);
    }

    #[test]
    fn integers_and_booleans() {
        let mut v = validator(
            r#"{"a": 1, "b": 9007199254740991, "c": 9007199254740992, "d": 0, "e": 1.0,
                "f": "1", "g": -1, "h": true, "i": "true", "j": 1.5, "k": 9007199254740991.0,
                "l": 2e3, "m": 99999999999999999999, "n": -0, "o": 9007199254740991.4,
                "p": 700e-2, "q": 0.5e1}"#,
            &[
                "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q",
            ],
        );
        // A number that names an integer is that integer, read from its
        // text: `k` is 2^53-1 exactly, though its f64 is one off.
        for (name, n) in [
            ("a", 1),
            ("b", MAX_SAFE_INTEGER),
            ("e", 1),
            ("k", MAX_SAFE_INTEGER),
            ("l", 2000),
            ("p", 7),
            ("q", 5),
        ] {
            assert_eq!(v.integer(name, Need::Required), Some(n), "{name}");
        }
        for name in ["c", "d", "f", "g", "j", "m", "n", "o"] {
            assert_eq!(v.integer(name, Need::Required), None, "{name}");
        }
        assert_eq!(v.boolean("h", Need::Required), Some(true));
        assert_eq!(v.boolean("i", Need::Required), None);
        let errors = match v.finish() {
            Err(ApiError::Invalid { errors, .. }) => errors,
            other => panic!("expected 422, got {other:?}"),
        };
        let message = |field: &str| {
            let error = errors.iter().find(|e| e.field == field);
            error.map_or("", |e| e.message.as_str())
        };
        assert_eq!(
            message("o"),
            "must be an integer from 1 to 9007199254740991"
        );
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["c", "d", "f", "g", "j", "m", "n", "o", "i"]);
    }

    #[test]
    fn exact_integers_from_number_text() {
        for (text, n) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("7.000", Some(7)),
            ("7e0", Some(7)),
            ("7E+2", Some(700)),
            ("0.07e2", Some(7)),
            ("700e-2", Some(7)),
            ("18446744073709551615", Some(u64::MAX)),
            ("18446744073709551616", None),
            ("1e20", None),
            ("7.5", None),
            ("75e-1", None),
            ("-7", None),
            ("1e999999999999999999999", None),
        ] {
            assert_eq!(exact_integer(text), n, "{text}");
        }
    }

    #[test]
    fn form_text_is_converted() {
        let fields = crate::request::decode_form(b"n=12&b=false&z=012&y=yes").unwrap();
        let mut v = Validator::new("todo", fields, &["n", "b", "z", "y"]);
        assert_eq!(v.integer("n", Need::Required), Some(12));
        assert_eq!(v.boolean("b", Need::Required), Some(false));
        assert_eq!(v.integer("z", Need::Required), None);
        assert_eq!(v.boolean("y", Need::Required), None);
        assert_eq!(fields_in_error(v), ["z", "y"]);
    }

    #[test]
    fn decimal_ids() {
        assert_eq!(parse_decimal("1"), Some(1));
        assert_eq!(parse_decimal("120"), Some(120));
        for bad in [
            "",
            "0",
            "007",
            "-1",
            "+1",
            "1.5",
            "abc",
            " 1",
            "99999999999999999999999",
        ] {
            let parsed = parse_decimal(bad).filter(|&n| n > 0);
            assert_eq!(parsed, None, "{bad:?}");
        }
    }
}
