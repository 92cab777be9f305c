//! `Prefer` (RFC 7240): what a client would like the server to do, which
//! the server may honour or ignore. This server honours one preference,
//! `return` (section 4.2), on DELETE: `return=minimal` asks for no
//! content, so the answer is 204 instead of 200 with the item deleted.
//!
//! ```text
//! Prefer     = 1#preference
//! preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
//! word       = token / quoted-string
//! ```
//!
//! Every other preference, a preference's parameters, and anything that
//! does not parse are ignored, as section 2 asks of a server that does
//! not support a preference: a preference is never an error. When
//! `return` is given twice, the first counts (section 2).

/// The `return` preference (RFC 7240 section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Return {
    /// `return=minimal`: no content, please.
    Minimal,
    /// `return=representation`: the resource's representation.
    Representation,
}

impl Return {
    /// The `Preference-Applied` value (section 3) when honoured.
    pub fn applied(self) -> &'static str {
        match self {
            Return::Minimal => "return=minimal",
            Return::Representation => "return=representation",
        }
    }
}

/// The first `return` preference of a `Prefer` value, if any names one
/// of the two values defined; a `return` with another value is ignored.
pub fn return_preference(prefer: Option<&str>) -> Option<Return> {
    for preference in split_outside_quotes(prefer?, ',') {
        // The preference itself, before its parameters.
        let head = split_outside_quotes(preference, ';').next().unwrap_or("");
        let (name, value) = head.split_once('=').unwrap_or((head, ""));
        if !name.trim().eq_ignore_ascii_case("return") {
            continue;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        return if value.eq_ignore_ascii_case("minimal") {
            Some(Return::Minimal)
        } else if value.eq_ignore_ascii_case("representation") {
            Some(Return::Representation)
        } else {
            None
        };
    }
    None
}

/// `text` split at each `separator` that is not inside a quoted-string
/// (RFC 9110 section 5.6.4: `"` opens and closes one, `\` escapes the
/// next character in it).
fn split_outside_quotes(text: &str, separator: char) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        let (mut quoted, mut escaped) = (false, false);
        for (i, c) in text.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                c if c == separator && !quoted => {
                    rest = Some(&text[i + c.len_utf8()..]);
                    return Some(&text[..i]);
                }
                _ => {}
            }
        }
        rest = None;
        Some(text)
    })
}

#[cfg(test)]
#[path = "prefer_tests.rs"]
mod tests;
