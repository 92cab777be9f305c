//! Loading an item of a snapshot directly: read straight into its fields'
//! types. The general way (`model::Members`, then the rules of a create,
//! as `load.rs` does) first builds a list of names and JSON values, eight
//! allocations for a todo; reading directly saves them on the start-up of
//! a big store (scripts/PERFORMANCE.md, "A million items").
//!
//! The direct read takes only the plain case: an object with `id` and the
//! fields a create takes, each once, of their JSON types (integers written
//! as plain digits), with values the rules of a create accept. Anything
//! else (a missing, unknown or repeated member, `7.0`, a title that is too
//! long) goes the general way, which accepts or refuses it with its own
//! message. So the direct read changes what start-up costs, never what loads:
//! `tests` checks that on the cases at its edge.

use std::borrow::Cow;

use serde::Deserialize;

use crate::model::{MAX_SAFE_INTEGER, MAX_TEXT, MAX_TITLE, Resource, Todo, Widget, text_rule};

/// A resource whose stored items can be read the direct read.
pub trait Direct: Resource {
    /// The item `json` holds, if it is in the plain case of the module
    /// comment; `None` sends it the general way. (`json` must be an
    /// object: serde's derive would also take an array.)
    fn direct(json: &str) -> Option<Self>;
}

/// Whether `json`, one JSON value, is an object.
fn object(json: &str) -> bool {
    json.trim_start().starts_with('{')
}

impl Direct for Todo {
    fn direct(json: &str) -> Option<Todo> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        struct Plain<'a> {
            id: u64,
            user_id: u64,
            #[serde(borrow)]
            title: Cow<'a, str>,
            #[serde(default)]
            completed: bool,
        }
        if !object(json) {
            return None;
        }
        let plain: Plain = serde_json::from_str(json).ok()?;
        let valid = integer(plain.id) && integer(plain.user_id) && text(&plain.title, MAX_TITLE);
        let new = (plain.user_id, plain.title.into_owned(), plain.completed);
        valid.then(|| Todo::create(plain.id, new))
    }
}

impl Direct for Widget {
    fn direct(json: &str) -> Option<Widget> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Plain<'a> {
            id: u64,
            #[serde(borrow)]
            price: Cow<'a, str>,
            #[serde(borrow)]
            quality: Cow<'a, str>,
        }
        if !object(json) {
            return None;
        }
        let plain: Plain = serde_json::from_str(json).ok()?;
        let valid =
            integer(plain.id) && text(&plain.price, MAX_TEXT) && text(&plain.quality, MAX_TEXT);
        let new = (plain.price.into_owned(), plain.quality.into_owned());
        valid.then(|| Widget::create(plain.id, new))
    }
}

/// An id or a `userId` the rules of a create take: 1 to 2^53-1.
fn integer(n: u64) -> bool {
    (1..=MAX_SAFE_INTEGER).contains(&n)
}

/// Text the rules of a create take ([`text_rule`]).
fn text(text: &str, max: usize) -> bool {
    text_rule(text, max).is_ok()
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
