//! `application/x-www-form-urlencoded` (the WHATWG URL standard, section
//! 5), the encoding of a request target's query and of form bodies (what
//! an HTML form and `curl -d` send): name and value pairs joined by `&`,
//! `+` for a space and `%XX` for a byte.

use super::invalid_utf8;
use crate::error::ApiError;
use crate::model::{Fields, Input};

/// The parameters of a query, in order, decoded as
/// `application/x-www-form-urlencoded` (the WHATWG URL standard, section 5:
/// what a browser sends for a form submitted by GET). `&` separates pairs
/// and the first `=` a name from its value; empty pairs (`a=1&&b=2`, a bare
/// `?`) are skipped, and a name without `=` has an empty value. As for form
/// bodies, and unlike the standard's lenient parser, a bad escape is 400
/// naming the parameter: a filter must never match text the client did not
/// send.
pub fn query_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    let mut pairs = Vec::new();
    for pair in query.split('&') {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let bad = |name: &str, why: &str| ApiError::BadRequest {
            detail: format!("bad query parameter '{name}': {why}"),
            hint: Some("percent-encode the query as UTF-8: %25 for '%', %C3%A9 for 'é'".into()),
        };
        // A name that does not decode is shown as sent.
        let name = percent_decode(name).map_err(|why| bad(name, why))?;
        let value = percent_decode(value).map_err(|why| bad(&name, why))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// Decodes one name or value: `+` is a space and `%XX` the byte with hex
/// value XX. Every `%` must start such an escape, and the bytes must be
/// UTF-8.
fn percent_decode(part: &str) -> Result<String, &'static str> {
    let bytes = part.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                // Checked digit by digit: `from_str_radix` alone takes "+1".
                let byte = bytes
                    .get(i + 1..i + 3)
                    .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    .ok_or("'%' must be followed by two hex digits")?;
                decoded.push(byte);
                i += 3;
            }
            b'+' => {
                decoded.push(b' ');
                i += 1;
            }
            byte => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).map_err(|_| "the decoded text is not UTF-8")
}

/// Decodes an `application/x-www-form-urlencoded` body (WHATWG URL
/// standard, section 5). Stricter than the standard's lenient parser:
/// every pair needs `=` and a name, every `%` two hex digits, and the
/// decoded text must be UTF-8. A body that looks like JSON gets a hint:
/// that is what `curl -d '{...}'` sends without `-H`.
pub fn decode_form(body: &[u8]) -> Result<Fields, ApiError> {
    let text = std::str::from_utf8(body).map_err(invalid_utf8)?;
    if text.trim_start().starts_with(['{', '[']) {
        return Err(ApiError::BadRequest {
            detail: "the body looks like JSON but is labelled application/x-www-form-urlencoded"
                .into(),
            hint: Some("send the header Content-Type: application/json (curl: -H 'Content-Type: application/json')".into()),
        });
    }
    let mut fields = Vec::new();
    for (index, pair) in text.split('&').enumerate() {
        let malformed = |why: &str| {
            ApiError::bad_request(format!("malformed form body: pair {}{why}", index + 1))
        };
        let Some((name, value)) = pair.split_once('=') else {
            return Err(malformed(&format!(" ('{pair}') has no '='")));
        };
        if name.is_empty() {
            return Err(malformed(" has no name"));
        }
        let name = percent_decode(name).map_err(|why| malformed(&format!(": {why}")))?;
        let value = percent_decode(value).map_err(|why| malformed(&format!(": {why}")))?;
        fields.push((name, Input::Text(value)));
    }
    Ok(fields)
}

/// Whether a body is `name=value` pairs joined by `&`, names being letters,
/// digits and `_-.[]%`: a form body, not JSON.
pub(super) fn looks_like_form(text: &str) -> bool {
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || b"_-.[]%".contains(&b);
    text.trim_end().split('&').all(|pair| {
        pair.split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.bytes().all(name_byte))
    })
}
