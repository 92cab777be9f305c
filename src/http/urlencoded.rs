//! Form bodies, `application/x-www-form-urlencoded` (the WHATWG URL
//! standard, section 5): what an HTML form and `curl -d` send, name and
//! value pairs joined by `&`, `+` for a space and `%XX` for a byte. A
//! request target's query has the same encoding; it is decoded with the
//! request, in `http.rs` ([`super::query_pairs`]), whose `percent_decode`
//! this shares.

use super::{invalid_utf8, percent_decode};
use crate::error::ApiError;
use crate::model::{Fields, Input};

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
