//! What the import did to one collection, counted as it goes ([`Tally`]),
//! and said in the report's lines ([`describe`]).

use std::collections::BTreeMap;

use crate::model::{Field, FieldType, Resource};

/// How many examples a line of the report quotes.
const EXAMPLES: usize = 3;

/// How many times, and the first few examples.
pub(super) type Counted = (usize, Vec<String>);

/// What happened to the items of one collection, for the report.
#[derive(Default)]
pub(super) struct Tally {
    /// Field name → values read another way (`"1"` as 1), with examples.
    pub converted: BTreeMap<String, Counted>,
    /// Field name → how many items had it, a field this server lacks.
    pub unknown: BTreeMap<String, usize>,
    /// Field name → values left out of items kept (an optional field with
    /// a value that is not one), with examples.
    pub dropped: BTreeMap<String, Counted>,
    /// Why → the items left out for it, with their places as examples.
    pub left_out: BTreeMap<String, Counted>,
    /// Items given a new id, with their ids as they were as examples.
    pub new_ids: Counted,
}

impl Tally {
    /// Adds what was done to one item kept.
    pub fn add(&mut self, item: Tally) {
        for (field, counted) in item.converted {
            merge(self.converted.entry(field).or_default(), counted);
        }
        for (field, count) in item.unknown {
            *self.unknown.entry(field).or_default() += count;
        }
        for (field, counted) in item.dropped {
            merge(self.dropped.entry(field).or_default(), counted);
        }
    }

    /// Counts an item left out, and why.
    pub fn leave_out(&mut self, why: String, place: String) {
        example(self.left_out.entry(why).or_default(), place);
    }
}

/// Counts one more, keeping the first few examples.
pub(super) fn example((count, examples): &mut Counted, shown: String) {
    *count += 1;
    if examples.len() < EXAMPLES {
        examples.push(shown);
    }
}

fn merge((total, kept): &mut Counted, (count, examples): Counted) {
    *total += count;
    let room = EXAMPLES - kept.len().min(EXAMPLES);
    kept.extend(examples.into_iter().take(room));
}

/// The report's lines for one collection, each indented under it; the
/// new ids given were `first_new` to `last_new`.
pub(super) fn describe<T: Resource>(tally: &Tally, first_new: u64, last_new: u64) -> Vec<String> {
    let fields: Vec<&str> = T::FIELDS.iter().skip(1).map(Field::name).collect();
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
        let found = T::FIELDS.iter().find(|known| known.name() == field);
        let field_type = found.map(Field::field_type);
        let how = match field_type {
            Some(FieldType::Text) if one => "from a number to text",
            Some(FieldType::Text) => "from numbers to text",
            Some(FieldType::Boolean) => "from text to true or false",
            _ if one => "from text to a number",
            _ => "from text to numbers",
        };
        lines.push(format!(
            "  {field}: converted {} {how} ({})",
            counted(*count, "value"),
            examples.join(", ")
        ));
        if let Some(FieldType::Text) = field_type {
            // json-server compared these as numbers; the list query
            // language compares text by code point (docs/queries.md).
            lines.push(format!(
                "    as text, {field} compares character by character, not by value: \
                 {field}_gte=10 matches \"9.99\", {field}_lte=10 does not, \
                 and _sort={field} puts \"10\" before \"9.99\""
            ));
        }
    }
    for (field, count) in &tally.unknown {
        lines.push(format!(
            "  {field}: left out of {}: not a field of a {} (its fields: {})",
            counted(*count, "item"),
            T::ITEM,
            fields.join(", ")
        ));
    }
    for (field, (count, examples)) in &tally.dropped {
        let examples = examples.join(", ");
        lines.push(if *count == 1 {
            format!(
                "  {field}: 1 value is neither true nor false ({examples}): left out, \
                 so that {} has {field} false",
                T::ITEM
            )
        } else {
            format!(
                "  {field}: {count} values are neither true nor false ({examples}): left out, \
                 so those {} have {field} false",
                T::COLLECTION
            )
        });
    }
    for (why, (count, places)) in &tally.left_out {
        let mut shown = places.join(", ");
        if *count > places.len() {
            shown.push_str(&format!(", and {} more", count - places.len()));
        }
        lines.push(format!(
            "  left out {}: {why}: {shown}",
            counted(*count, "item")
        ));
    }
    lines
}

/// `1 item`, `2 items`.
pub(super) fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
