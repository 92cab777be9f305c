//! The preconditions `If-Match` and `If-None-Match` (RFC 9110 sections
//! 13.1.1 and 13.1.2): a field value read into `*` or the entity tags it
//! lists, and the two comparisons of section 8.8.3.2.
//!
//! Both fields are `"*" / #entity-tag`, an entity tag being
//! `[ "W/" ] DQUOTE *etagc DQUOTE` (section 8.8.3). A value that is
//! neither is 400 (section 15.5.1, malformed syntax), not ignored: a
//! client that sends `If-Match` wants the change made only under it, and
//! going ahead without it could overwrite another client's change. A value
//! that lists no tag at all (empty, or commas only) is refused too: the
//! list syntax lets it through, but it could never match, and it comes from
//! a client that meant to send an `ETag` and had none. Empty elements
//! between tags are skipped, as section 5.6.1.2 asks of a recipient.

use crate::error::ApiError;

/// A precondition field's value.
#[derive(Debug, PartialEq)]
pub enum Condition<'a> {
    /// `*`: any current representation.
    Any,
    /// The entity tags listed (at least one), each as sent: quotes and any
    /// `W/` included.
    Tags(Vec<&'a str>),
}

impl<'a> Condition<'a> {
    /// Reads the value of `field` (`If-Match` or `If-None-Match`); a
    /// malformed one is a 400 that names the field.
    pub fn parse(field: &str, value: &'a str) -> Result<Condition<'a>, ApiError> {
        read(value).ok_or_else(|| ApiError::BadRequest {
            detail: format!("{field}: '{value}' is neither * nor a list of entity tags"),
            hint: Some(
                "send * or entity tags exactly as ETag gave them, double quotes included".into(),
            ),
        })
    }

    /// Strong comparison (section 8.8.3.2), for `If-Match`: `*`, or a
    /// listed tag that is `etag` itself; a weak tag never matches.
    pub fn matches_strong(&self, etag: &str) -> bool {
        match self {
            Condition::Any => true,
            Condition::Tags(tags) => !etag.starts_with("W/") && tags.contains(&etag),
        }
    }

    /// Weak comparison (section 8.8.3.2), for `If-None-Match`: `*`, or a
    /// listed tag whose opaque part, `W/` aside, is `etag`'s.
    pub fn matches_weak(&self, etag: &str) -> bool {
        fn opaque(tag: &str) -> &str {
            tag.strip_prefix("W/").unwrap_or(tag)
        }
        match self {
            Condition::Any => true,
            Condition::Tags(tags) => tags.iter().any(|tag| opaque(tag) == opaque(etag)),
        }
    }
}

/// The value's `*` or tags; `None` when it is malformed or lists none.
fn read(value: &str) -> Option<Condition<'_>> {
    // OWS: spaces and horizontal tabs (section 5.6.3).
    let ows = [' ', '\t'];
    if value.trim_matches(ows) == "*" {
        return Some(Condition::Any);
    }
    let mut tags = Vec::new();
    let mut rest = value.trim_start_matches(ows);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(',') {
            // An empty element.
            rest = after.trim_start_matches(ows);
            continue;
        }
        let length = entity_tag_length(rest)?;
        tags.push(&rest[..length]);
        rest = rest[length..].trim_start_matches(ows);
        // After a tag: the end, or the comma before the next element.
        if !rest.is_empty() && !rest.starts_with(',') {
            return None;
        }
    }
    (!tags.is_empty()).then_some(Condition::Tags(tags))
}

/// The length of the entity tag that `text` starts with, if it starts with
/// one: `[ "W/" ] DQUOTE *etagc DQUOTE`, where etagc is `%x21 / %x23-7E /
/// obs-text`, any visible character but `"` (a comma included).
fn entity_tag_length(text: &str) -> Option<usize> {
    let weak = if text.starts_with("W/") { 2 } else { 0 };
    let opaque = text[weak..].strip_prefix('"')?;
    let end = opaque.find('"')?;
    let etagc = |byte: u8| byte == 0x21 || (0x23..=0x7E).contains(&byte) || byte >= 0x80;
    opaque[..end].bytes().all(etagc).then_some(weak + end + 2)
}

#[cfg(test)]
#[path = "conditional_tests.rs"]
mod tests;
