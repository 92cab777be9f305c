//! The query of a request target, decoded into name and value pairs.

use crate::error::ApiError;

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
pub(crate) fn percent_decode(part: &str) -> Result<String, &'static str> {
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
