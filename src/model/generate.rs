//! Generated data for `--generate todos=200,widgets=50 --seed S`: plausible
//! todos and widgets, so that a demo or a load test needs no fixture file.
//!
//! The same seed gives the same items on every machine and in every
//! version: the numbers come from [`SplitMix64`], a few lines of integer
//! arithmetic written out here (no library whose algorithm could change),
//! the words from fixed lists, and no floating point or hash-map order is
//! involved. Each collection draws from its own stream, so `todos=3` gives
//! the same three todos with or without widgets beside them.
//!
//! Every item is built as a create body and checked by the collection's
//! own `parse_new`, the path a `POST` takes, so generated data follows the
//! same rules as data a client sends. This module knows nothing of the
//! store: `lib.rs` hands the checked items to it.

use serde_json::Value;

use super::{Input, Resource, Todo, Widget};
use crate::error::ApiError;

/// SplitMix64, the generator of Steele, Lea and Flood, "Fast Splittable
/// Pseudorandom Number Generators" (OOPSLA 2014), as in the public-domain
/// reference `splitmix64.c` by Sebastiano Vigna (prng.di.unimi.it). Not for
/// secrets: for data that only has to look varied and come out the same.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// What each step adds to the state: 2^64 divided by the golden ratio, odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The `n`-th number (from 1) of the generator seeded with `seed`,
    /// without drawing those before it: each step adds [`GAMMA`] to the
    /// state, so the state before the n-th is `seed + (n - 1) * GAMMA`.
    /// `--fail-rate` draws one per request this way (`app/faults.rs`).
    pub fn nth(seed: u64, n: u64) -> u64 {
        let state = seed.wrapping_add(n.wrapping_sub(1).wrapping_mul(GAMMA));
        SplitMix64::new(state).next_u64()
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number from 0 to `n - 1`. The remainder favours small numbers by
    /// at most n / 2^64, far too little to see in generated data.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// One of `words`.
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
    }
}

/// How many items of each collection to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spec {
    pub todos: usize,
    pub widgets: usize,
}

/// The largest count a spec may ask for (the largest `--max-items`).
const MAX_COUNT: usize = 100_000_000;

/// Reads a spec: `todos=200,widgets=50`, each collection at most once, in
/// any order. The error says what a good spec looks like, for
/// `invalid value '...' for --generate: expected ...`.
pub fn parse_spec(text: &str) -> Result<Spec, &'static str> {
    const FORM: &str = "collection=count pairs, comma-separated, such as todos=200,widgets=50";
    let mut todos = None;
    let mut widgets = None;
    if text.trim().is_empty() {
        return Err(FORM);
    }
    for pair in text.split(',') {
        let (name, count) = pair.split_once('=').ok_or(FORM)?;
        let slot = match name.trim() {
            "todos" => &mut todos,
            "widgets" => &mut widgets,
            _ => return Err("the collections todos and widgets, such as todos=200,widgets=50"),
        };
        let count = count.trim();
        if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return Err("a whole number of items after each '=', such as todos=200");
        }
        let count = count
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= MAX_COUNT)
            .ok_or("at most 100000000 items per collection")?;
        if slot.replace(count).is_some() {
            return Err("each collection once, such as todos=200,widgets=50");
        }
    }
    Ok(Spec {
        todos: todos.unwrap_or(0),
        widgets: widgets.unwrap_or(0),
    })
}

/// The stream of each collection: the seed mixed with a constant of its
/// own, so the two collections do not repeat each other's numbers.
const TODO_STREAM: u64 = 0x746f_646f_7300_0000; // "todos" in ASCII
const WIDGET_STREAM: u64 = 0x7769_6467_6574_7300; // "widgets" in ASCII

const TASKS: &[&str] = &[
    "Buy milk",
    "Call the plumber",
    "Water the plants",
    "Pay the electricity bill",
    "Book a dentist appointment",
    "Renew the passport",
    "Take out the recycling",
    "Walk the dog",
    "Reply to Anna's email",
    "Fix the leaking tap",
    "Return the library books",
    "Plan the team meeting",
    "Clean the windows",
    "Order printer ink",
    "Write the weekly report",
    "Pick up the dry cleaning",
];

const QUALITIES: &[&str] = &[
    "good",
    "excellent",
    "fair",
    "poor",
    "like new",
    "refurbished",
    "damaged",
];

/// How many users the generated todos belong to (`userId` 1 to 10).
const USERS: u64 = 10;

/// `count` todos as `POST /api/todos` would accept them: a task from a
/// short list, one of ten users, about a third completed.
pub fn todos(seed: u64, count: usize) -> Result<Vec<<Todo as Resource>::New>, ApiError> {
    let mut rng = SplitMix64::new(seed ^ TODO_STREAM);
    (0..count)
        .map(|_| {
            let title = rng.pick(TASKS);
            let user_id = 1 + rng.below(USERS);
            let completed = rng.below(3) == 0;
            Todo::parse_new(vec![
                field("userId", Value::from(user_id)),
                field("title", Value::from(title)),
                field("completed", Value::from(completed)),
            ])
        })
        .collect()
}

/// `count` widgets as `POST /api/widgets` would accept them: a price from
/// $1 to $500 (whole dollars, so no float is formatted) and a quality.
pub fn widgets(seed: u64, count: usize) -> Result<Vec<<Widget as Resource>::New>, ApiError> {
    let mut rng = SplitMix64::new(seed ^ WIDGET_STREAM);
    (0..count)
        .map(|_| {
            let price = format!("${}", 1 + rng.below(500));
            let quality = rng.pick(QUALITIES);
            Widget::parse_new(vec![
                field("price", Value::from(price)),
                field("quality", Value::from(quality)),
            ])
        })
        .collect()
}

fn field(name: &str, value: Value) -> (String, Input) {
    (name.to_string(), Input::Json(value))
}

#[cfg(test)]
#[path = "generate_tests.rs"]
mod tests;
