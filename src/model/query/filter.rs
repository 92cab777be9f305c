//! A list query's filters, each made ready to test an item at a cost that
//! does not grow with how many values it was given: equality's values are
//! sorted, and an item is looked up among them by binary search (one
//! value costs one comparison, as it did; 30,000 cost fifteen); repeated
//! `_gte` and `_lte` come down to one bound; repeated `_like` values are
//! tried in turn, but their total length is bounded.
//!
//! Repeated parameters combine as in json-server 0.17
//! (`router/plural.js`): an item passes `field=a&field=b`, `_gte`, `_lte`
//! and `_like` if it passes for any of the values, and `field_ne=a&
//! field_ne=b` if it passes for all of them.
//!
//! `_like` is a case-insensitive regular expression, as json-server reads
//! it, run by `regex-lite`: its matching time grows linearly with the
//! pattern and the text (no backtracking), so no pattern can make one
//! item cost more than its length allows. A value with no character that
//! means anything in a pattern (`milk`, `Buy bread`) finds the same items
//! as the pattern would, and is looked for as text, which is faster.

use regex_lite::{Regex, RegexBuilder};

use super::{Op, bad_hinted};
use crate::error::ApiError;
use crate::model::FieldValue;

/// The longest `_like` value, in characters; the values of a repeated
/// `_like` parameter may add up to no more.
pub const MAX_PATTERN: usize = 100;

/// The most memory a compiled `_like` pattern may take, in bytes: a
/// repetition multiplies what it repeats (`x{100}` holds a hundred `x`),
/// and matching time grows with the compiled size.
const MAX_COMPILED: usize = 16 << 10;

/// A value to compare with, already read by the field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Operand {
    Integer(u64),
    Text(String),
    Boolean(bool),
}

impl Operand {
    fn as_value(&self) -> FieldValue<'_> {
        match self {
            Operand::Integer(n) => FieldValue::Integer(*n),
            Operand::Text(s) => FieldValue::Text(s),
            Operand::Boolean(b) => FieldValue::Boolean(*b),
        }
    }
}

/// One filter: a field, an operator, and its values made into a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Filter {
    pub(super) field: usize,
    pub(super) op: Op,
    test: Test,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Test {
    /// Equal to the one value: the common case, one comparison.
    Equals(Operand),
    /// Equal to any of the values (none: nothing passes).
    AnyOf(Values),
    /// Equal to none of the values.
    NoneOf(Values),
    /// At least the least of the values.
    AtLeast(Option<Operand>),
    /// At most the greatest of the values.
    AtMost(Option<Operand>),
    /// Matching any of the patterns, whose values add up to `chars`.
    Like { needles: Vec<Needle>, chars: usize },
}

impl Filter {
    /// A filter on `field` with `op`, holding no value yet.
    pub(super) fn new(field: usize, op: Op) -> Filter {
        let test = match op {
            Op::Eq => Test::AnyOf(Values::default()),
            Op::Ne => Test::NoneOf(Values::default()),
            Op::Gte => Test::AtLeast(None),
            Op::Lte => Test::AtMost(None),
            Op::Like => Test::Like {
                needles: Vec::new(),
                chars: 0,
            },
        };
        Filter { field, op, test }
    }

    /// Adds values, read by the field's type (for `_like`, text as sent);
    /// `param` is what a 400 names.
    pub(super) fn add(&mut self, param: &str, operands: Vec<Operand>) -> Result<(), ApiError> {
        for operand in operands {
            match (&mut self.test, operand) {
                (Test::AnyOf(values) | Test::NoneOf(values), operand) => values.insert(operand),
                // Made only by `finish`, after every value is added.
                (Test::Equals(_), _) => {}
                (Test::AtLeast(bound), operand) => {
                    if bound
                        .as_ref()
                        .is_none_or(|b| operand.as_value() < b.as_value())
                    {
                        *bound = Some(operand);
                    }
                }
                (Test::AtMost(bound), operand) => {
                    if bound
                        .as_ref()
                        .is_none_or(|b| operand.as_value() > b.as_value())
                    {
                        *bound = Some(operand);
                    }
                }
                (Test::Like { needles, chars }, Operand::Text(value)) => {
                    *chars += value.chars().count();
                    if *chars > MAX_PATTERN {
                        return Err(too_long(param));
                    }
                    needles.push(Needle::new(param, &value)?);
                }
                // `_like` is refused on other types before a value is read.
                (Test::Like { .. }, _) => {}
            }
        }
        Ok(())
    }

    /// Makes the filter ready to test items, once every value is added.
    pub(super) fn finish(&mut self) {
        if let Test::AnyOf(values) = &mut self.test
            && let Some(one) = values.one()
        {
            self.test = Test::Equals(one);
        } else if let Test::AnyOf(values) | Test::NoneOf(values) = &mut self.test {
            values.integers.sort_unstable();
            values.integers.dedup();
            values.texts.sort_unstable();
            values.texts.dedup();
            values.booleans.sort_unstable();
            values.booleans.dedup();
        }
    }

    /// Whether the field's value passes (once finished). Inlined into the
    /// loop over the items, as `ListQuery::matches` is, and for the same
    /// reason.
    #[inline(always)]
    pub(super) fn holds(&self, value: FieldValue<'_>) -> bool {
        match &self.test {
            Test::Equals(one) => value == one.as_value(),
            Test::AnyOf(values) => values.contains(value),
            Test::NoneOf(values) => !values.contains(value),
            Test::AtLeast(bound) => bound.as_ref().is_some_and(|b| value >= b.as_value()),
            Test::AtMost(bound) => bound.as_ref().is_some_and(|b| value <= b.as_value()),
            Test::Like { needles, .. } => like(needles, value),
        }
    }

    /// Whether it runs a regular expression: far more per item than a
    /// comparison, so the store runs it after releasing the lock.
    pub(super) fn has_pattern(&self) -> bool {
        match &self.test {
            Test::Like { needles, .. } => needles.iter().any(|n| matches!(n, Needle::Pattern(..))),
            _ => false,
        }
    }
}

/// A filter's values, by type (a field has one); sorted by
/// [`Filter::finish`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Values {
    integers: Vec<u64>,
    texts: Vec<String>,
    booleans: Vec<bool>,
}

impl Values {
    fn insert(&mut self, operand: Operand) {
        match operand {
            Operand::Integer(n) => self.integers.push(n),
            Operand::Text(text) => self.texts.push(text),
            Operand::Boolean(b) => self.booleans.push(b),
        }
    }

    /// The only value, when there is exactly one.
    fn one(&mut self) -> Option<Operand> {
        match (
            &mut self.integers[..],
            &mut self.texts[..],
            &self.booleans[..],
        ) {
            ([n], [], []) => Some(Operand::Integer(*n)),
            ([], [text], []) => Some(Operand::Text(std::mem::take(text))),
            ([], [], [b]) => Some(Operand::Boolean(*b)),
            _ => None,
        }
    }

    fn contains(&self, value: FieldValue<'_>) -> bool {
        match value {
            FieldValue::Integer(n) => self.integers.binary_search(&n).is_ok(),
            FieldValue::Text(text) => {
                let at = self.texts.binary_search_by(|v| v.as_str().cmp(text));
                at.is_ok()
            }
            FieldValue::Boolean(b) => self.booleans.binary_search(&b).is_ok(),
        }
    }
}

/// One `_like` value, ready to look for.
#[derive(Debug, Clone)]
enum Needle {
    /// Text with no character special in a pattern, lowercased.
    Text(String),
    /// A pattern, matching ASCII letters in either case. `regex-lite`
    /// folds only ASCII, so the pattern's other letters were lowercased,
    /// and when it has any (the `bool`), so is a text that is not ASCII.
    Pattern(Regex, bool),
}

impl PartialEq for Needle {
    fn eq(&self, other: &Needle) -> bool {
        match (self, other) {
            (Needle::Text(a), Needle::Text(b)) => a == b,
            (Needle::Pattern(a, _), Needle::Pattern(b, _)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

impl Eq for Needle {}

impl Needle {
    fn new(param: &str, value: &str) -> Result<Needle, ApiError> {
        const SPECIAL: &[char] = &[
            '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$',
        ];
        if !value.contains(SPECIAL) {
            return Ok(Needle::Text(value.to_lowercase()));
        }
        let folds = !value.is_ascii();
        let mut pattern = String::with_capacity(value.len());
        for c in value.chars() {
            match c.is_ascii() {
                true => pattern.push(c),
                false => pattern.extend(c.to_lowercase()),
            }
        }
        let regex = RegexBuilder::new(&pattern)
            .case_insensitive(true)
            .size_limit(MAX_COMPILED)
            .build()
            .map_err(|err| not_a_pattern(param, value, &err.to_string()))?;
        Ok(Needle::Pattern(regex, folds))
    }

    fn is_in(&self, text: &str) -> bool {
        match self {
            Needle::Text(needle) => contains_folded(text, needle),
            Needle::Pattern(regex, true) if !text.is_ascii() => {
                regex.is_match(&text.to_lowercase())
            }
            Needle::Pattern(regex, _) => regex.is_match(text),
        }
    }
}

/// Whether `value` is text that any of `needles` is in.
fn like(needles: &[Needle], value: FieldValue<'_>) -> bool {
    match value {
        FieldValue::Text(text) => needles.iter().any(|needle| needle.is_in(text)),
        _ => false,
    }
}

fn too_long(param: &str) -> ApiError {
    bad_hinted(
        param,
        format!(
            "a _like pattern is at most {MAX_PATTERN} characters, and so are a repeated one's together"
        ),
        "shorten the pattern, or narrow the list with other filters",
    )
}

fn not_a_pattern(param: &str, value: &str, why: &str) -> ApiError {
    let why = match why {
        "compiled regex exceeded size limit" => format!(
            "too large once compiled (more than {} KiB; a repetition such as {{100}} copies what it repeats)",
            MAX_COMPILED >> 10
        ),
        why => why.to_string(),
    };
    bad_hinted(
        param,
        format!("'{value}' is not a regular expression: {why}"),
        "_like takes a regular expression, ignoring case; write \\ before a character meant as itself: \\. \\( \\[ \\? \\+ \\$",
    )
}

/// Whether `text` contains `needle` (already lowercased), ignoring case.
pub(super) fn contains_folded(text: &str, needle: &str) -> bool {
    if text.is_ascii() && needle.is_ascii() {
        let (text, needle) = (text.as_bytes(), needle.as_bytes());
        return needle.is_empty()
            || text
                .windows(needle.len())
                .any(|window| window.eq_ignore_ascii_case(needle));
    }
    text.to_lowercase().contains(needle)
}
