//! What the handlers see of a request, and the rules for reading it: the
//! `Accept` header, the `Content-Type` header, the body size cap, the query
//! string, and decoding a JSON or form body into a list of named fields.
//!
//! Nothing here knows about sockets or the HTTP library: the transport copies the
//! header fields we read ([`READ_HEADERS`]) into a [`Request`] and hands
//! over the body as a plain `Read`, so everything below can be tested with
//! byte strings.

use std::borrow::Cow;
use std::io::{self, Read};

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::error::ApiError;

/// The methods this server tells apart; everything else is `Other` (405).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
    Other,
}

impl Method {
    /// Methods are case-sensitive (RFC 9110 section 9.1): `get` is not `GET`.
    pub fn parse(name: &str) -> Method {
        match name {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }

    /// The name as sent, for every method but `Other`.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Other => return None,
        })
    }
}

/// The request header fields this server reads: the transport copies
/// these, and only these, into a [`Request`]. Reading one more is one more
/// name here.
pub const READ_HEADERS: &[&str] = &[
    "Accept",
    "Authorization",
    "Content-Type",
    "If-Match",
    "If-None-Match",
    "Origin",
    "Access-Control-Request-Method",
    "Access-Control-Request-Headers",
];

/// One request as the application sees it.
pub struct Request<'a> {
    pub method: Method,
    /// The method as sent, for messages about unsupported ones.
    pub method_name: &'a str,
    /// The request target: path plus optional `?query`.
    pub target: &'a str,
    /// The fields of [`READ_HEADERS`] the request has, by name.
    pub headers: Vec<(&'static str, String)>,
    /// The declared `Content-Length`, when there is one.
    pub content_length: Option<u64>,
    /// The body, read on demand; reading may send `100 Continue`.
    pub body: &'a mut dyn Read,
    /// `--max-body-bytes`.
    pub max_body_bytes: usize,
}

impl<'a> Request<'a> {
    /// A header field's value (one of [`READ_HEADERS`]), by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// A CORS preflight: `OPTIONS` with `Access-Control-Request-Method`. It
    /// ignores the query string.
    pub fn is_preflight(&self) -> bool {
        self.method == Method::Options && self.header("Access-Control-Request-Method").is_some()
    }

    /// The path without its query string.
    pub fn path(&self) -> &'a str {
        self.split_target().0
    }

    /// The query string after `?`, if any.
    pub fn query(&self) -> Option<&'a str> {
        self.split_target().1
    }

    /// A byte loop: on a target this short, `split_once('?')` spent more
    /// setting up its search than searching, several times a request.
    fn split_target(&self) -> (&'a str, Option<&'a str>) {
        let target = self.target;
        match target.bytes().position(|b| b == b'?') {
            Some(at) => (&target[..at], Some(&target[at + 1..])),
            None => (target, None),
        }
    }

    /// Rejects any query parameter but `_delay` (checked by
    /// [`crate::query::delay_param`]): for paths that take none (the
    /// contract: "a trailing query string ... is 400, naming the parameter").
    pub fn forbid_query(&self) -> Result<(), ApiError> {
        crate::query::delay_param(self.query())?;
        let pairs = query_pairs(self.query())?;
        match pairs.into_iter().find(|(name, _)| name != "_delay") {
            None => Ok(()),
            Some((name, _)) => Err(ApiError::BadRequest {
                detail: format!(
                    "unknown query parameter '{name}': this path takes no query parameters"
                ),
                hint: Some("remove the query string"),
            }),
        }
    }

    /// 406 unless the client accepts JSON (see [`accepts_json`]).
    pub fn check_accept(&self) -> Result<(), ApiError> {
        match self.header("Accept") {
            Some(accept) if !accepts_json(accept) => Err(ApiError::NotAcceptable),
            _ => Ok(()),
        }
    }

    /// Reads and decodes the body into fields, enforcing, in this order: the
    /// size cap from `Content-Length` (before reading a byte), the media
    /// type, the size cap while reading, then the syntax of the format.
    /// `merge_patch` also admits `application/merge-patch+json` (PATCH).
    pub fn fields(&mut self, merge_patch: bool) -> Result<Fields<'static>, ApiError> {
        let limit = self.max_body_bytes;
        if self.content_length.is_some_and(|n| n > limit as u64) {
            return Err(ApiError::ContentTooLarge { limit });
        }
        let format = match self.header("Content-Type") {
            Some(value) => BodyFormat::parse(value, merge_patch)?,
            None => None,
        };
        let expected = self.content_length.map_or(0, |n| n as usize);
        let body = read_capped(&mut *self.body, limit, expected)?;
        Ok(decode(&body, format)?
            .into_iter()
            .map(|(name, value)| (Cow::Owned(name.into_owned()), value))
            .collect())
    }
}

/// Decodes a whole body in the format its `Content-Type` named.
fn decode(body: &[u8], format: Option<BodyFormat>) -> Result<Fields<'_>, ApiError> {
    if body.is_empty() {
        return Err(ApiError::BadRequest {
            detail: "the request body is empty".into(),
            hint: Some("send a JSON object, e.g. {\"title\": \"Buy milk\"}"),
        });
    }
    match format {
        Some(BodyFormat::Json) => decode_json(body),
        Some(BodyFormat::Form) => decode_form(body),
        None => Err(ApiError::UnsupportedMediaType {
            detail: "the request has a body but no Content-Type".into(),
        }),
    }
}

/// Reads at most `limit` bytes; one byte more means 413. Chunked bodies have
/// no `Content-Length`, so this is where they are cut off.
/// `expected` (the declared length, already checked against `limit`) sizes
/// the buffer so that a body of that length is read without regrowing.
fn read_capped(body: &mut dyn Read, limit: usize, expected: usize) -> Result<Vec<u8>, ApiError> {
    let mut buf = Vec::with_capacity(expected.min(limit) + 1);
    match body.take(limit as u64 + 1).read_to_end(&mut buf) {
        Ok(_) if buf.len() > limit => Err(ApiError::ContentTooLarge { limit }),
        Ok(_) => Ok(buf),
        // SO_RCVTIMEO reports a timeout as WouldBlock; our deadline as TimedOut.
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
        {
            Err(ApiError::RequestTimeout)
        }
        Err(err) => Err(ApiError::bad_request(format!(
            "cannot read the request body: {err}"
        ))),
    }
}

/// Does this `Accept` value (RFC 9110 section 12.5.1) admit a JSON response?
/// It does when it names `*/*`, `application/*`, `application/json` or
/// `application/problem+json` with a q-value above 0. A blank value counts
/// as absent.
pub fn accepts_json(accept: &str) -> bool {
    if accept.trim().is_empty() {
        return true;
    }
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let served = matches!(
            media.as_str(),
            "*/*" | "application/*" | "application/json" | "application/problem+json"
        );
        served && q_value(parts) > 0.0
    })
}

/// The `q` parameter among a media range's parameters; 1 when absent, 0
/// when malformed (RFC 9110 section 12.4.2 allows at most three decimals).
fn q_value<'a>(params: impl Iterator<Item = &'a str>) -> f32 {
    for param in params {
        if let Some((name, value)) = param.split_once('=')
            && name.trim().eq_ignore_ascii_case("q")
        {
            return value
                .trim()
                .parse::<f32>()
                .ok()
                .filter(|q| (0.0..=1.0).contains(q))
                .unwrap_or(0.0);
        }
    }
    1.0
}

/// The body formats we decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Form,
}

impl BodyFormat {
    /// Parses a `Content-Type` value (RFC 9110 section 8.3): type and subtype
    /// are case-insensitive; a `charset` parameter must be UTF-8; other
    /// parameters are ignored. Anything else is 415.
    pub fn parse(value: &str, merge_patch: bool) -> Result<Option<BodyFormat>, ApiError> {
        // What nearly every JSON client sends, answered without splitting.
        if value == "application/json" {
            return Ok(Some(BodyFormat::Json));
        }
        let mut parts = value.split(';');
        let media = parts.next().unwrap_or("").trim();
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        let format = match () {
            () if is("application/json") => BodyFormat::Json,
            () if merge_patch && is("application/merge-patch+json") => BodyFormat::Json,
            () if is("application/x-www-form-urlencoded") => BodyFormat::Form,
            () => {
                let also = if merge_patch {
                    ", application/merge-patch+json"
                } else {
                    ""
                };
                return Err(ApiError::UnsupportedMediaType {
                    detail: format!(
                        "Content-Type '{}' is not supported; use application/json{also} or application/x-www-form-urlencoded",
                        value.trim()
                    ),
                });
            }
        };
        for param in parts {
            let Some((name, charset)) = param.split_once('=') else {
                continue;
            };
            let charset = charset.trim().trim_matches('"');
            if name.trim().eq_ignore_ascii_case("charset") && !charset.eq_ignore_ascii_case("utf-8")
            {
                return Err(ApiError::UnsupportedMediaType {
                    detail: format!("charset '{charset}' is not supported; send UTF-8"),
                });
            }
        }
        Ok(Some(format))
    }
}

/// A field value as decoded: JSON keeps its type, a form gives text.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Json(Value),
    Text(String),
}

/// The members of a body object, in the order sent, duplicates kept so that
/// validation can report them (serde_json's own maps keep only the last).
/// A name is borrowed from the body when it can be (no escapes in it).
pub type Fields<'a> = Vec<(Cow<'a, str>, Input)>;

/// Decodes a JSON body. Syntax errors are 400 with line and column; a valid
/// document that is not an object is 422 (well-formed, but wrong).
pub fn decode_json(body: &[u8]) -> Result<Fields<'_>, ApiError> {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(err) => return Err(invalid_utf8(err)),
    };
    // From the checked text: serde_json then skips checking strings again.
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Members::deserialize(&mut de).and_then(|members| de.end().map(|()| members));
    let err = match parsed {
        Ok(Members(fields)) => return Ok(fields),
        // Not an object; but is it valid JSON at all? `[1,` is a syntax
        // error (400), `[1]` a well-formed document of the wrong shape (422).
        Err(err) if err.is_data() => match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => {
                return Err(ApiError::Invalid {
                    kind: "request body",
                    errors: vec![crate::error::FieldError::new("", "must be a JSON object")],
                });
            }
            Err(syntax) => syntax,
        },
        Err(err) => err,
    };
    Err(ApiError::BadRequest {
        detail: format!(
            "the body is not valid JSON: {} at line {}, column {}",
            json_reason(&err),
            err.line(),
            err.column()
        ),
        hint: None,
    })
}

/// serde_json's message without its own " at line L column C" suffix.
fn json_reason(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn invalid_utf8(err: std::str::Utf8Error) -> ApiError {
    ApiError::bad_request(format!(
        "the body is not valid UTF-8 (bad byte at offset {})",
        err.valid_up_to()
    ))
}

/// A JSON object read member by member, duplicates kept (the data files'
/// items are read with it too).
pub(crate) struct Members<'de>(pub(crate) Fields<'de>);

/// Also for names that outlive the text (`'de: 'a`), as serde's `borrow`
/// attribute asks of a field of a derived struct.
impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'a>, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some((Name(name), value)) = map.next_entry::<Name<'de>, Value>()? {
                    fields.push((name, Input::Json(value)));
                }
                Ok(Members(fields))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A member's name, borrowed from the body unless it has escapes. (serde's
/// own `Cow<str>` always copies.)
pub(crate) struct Name<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Name<'de>, D::Error> {
        struct NameVisitor;

        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(name)))
            }

            fn visit_str<E>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name.to_string())))
            }

            fn visit_string<E>(self, name: String) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name)))
            }
        }

        deserializer.deserialize_str(NameVisitor)
    }
}

/// Decodes an `application/x-www-form-urlencoded` body (WHATWG URL
/// standard, section 5). We are stricter than the standard's lenient
/// parser: every pair needs `=` and a name, every `%` two hex digits, and
/// the decoded text must be UTF-8. A body that looks like JSON gets a hint,
/// because that is what `curl -d '{...}'` sends without `-H`.
pub fn decode_form(body: &[u8]) -> Result<Fields<'_>, ApiError> {
    let text = std::str::from_utf8(body).map_err(invalid_utf8)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Err(ApiError::BadRequest {
            detail: "the body looks like JSON but is labelled application/x-www-form-urlencoded"
                .into(),
            hint: Some(
                "send the header Content-Type: application/json (curl: -H 'Content-Type: application/json')",
            ),
        });
    }
    let mut fields = Vec::new();
    for (index, pair) in text.split('&').enumerate() {
        let pair_no = index + 1;
        let Some((name, value)) = pair.split_once('=') else {
            return Err(ApiError::bad_request(format!(
                "malformed form body: pair {pair_no} ('{pair}') has no '='"
            )));
        };
        if name.is_empty() {
            return Err(ApiError::bad_request(format!(
                "malformed form body: pair {pair_no} has no name"
            )));
        }
        let malformed =
            |why| ApiError::bad_request(format!("malformed form body: pair {pair_no}: {why}"));
        let name = percent_decode(name).map_err(malformed)?;
        let value = percent_decode(value).map_err(malformed)?;
        fields.push((name, Input::Text(value.into_owned())));
    }
    Ok(fields)
}

/// One query parameter, decoded: name and value, borrowed from the target
/// when they hold no escape.
pub type QueryPair<'a> = (Cow<'a, str>, Cow<'a, str>);

/// The parameters of a query string, in order, decoded as
/// `application/x-www-form-urlencoded` (the WHATWG URL standard, section 5:
/// what a browser sends for a form submitted by GET). This is the one place
/// a query is decoded. `&` separates pairs and the first `=` a name from its
/// value; empty pairs (`a=1&&b=2`, a bare `?`) are skipped, and a name
/// without `=` has an empty value. As for form bodies, and unlike the
/// standard's lenient parser, a `%` without two hex digits after it, or
/// escapes that decode to bytes that are not UTF-8, is 400 naming the
/// parameter: a filter must never match text the client did not send.
pub fn query_pairs(query: Option<&str>) -> Result<Vec<QueryPair<'_>>, ApiError> {
    let mut pairs = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        // A name that does not decode is shown as sent.
        let name = percent_decode(name).map_err(|why| malformed_query(name, why))?;
        let value = percent_decode(value).map_err(|why| malformed_query(&name, why))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

fn malformed_query(name: &str, why: &str) -> ApiError {
    ApiError::BadRequest {
        detail: format!("bad query parameter '{name}': {why}"),
        hint: Some("percent-encode the query as UTF-8: %25 for '%', %C3%A9 for 'é'"),
    }
}

/// Decodes one name or value of `application/x-www-form-urlencoded` text:
/// `+` is a space and `%XX` the byte with hex value XX. Every `%` must
/// start such an escape, and the bytes must be UTF-8. Borrows `part` when
/// there is nothing to decode.
fn percent_decode(part: &str) -> Result<Cow<'_, str>, &'static str> {
    if !part.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(Cow::Borrowed(part));
    }
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
    String::from_utf8(decoded)
        .map(Cow::Owned)
        .map_err(|_| "the decoded text is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_rules() {
        for ok in [
            "application/json",
            "*/*",
            "application/*",
            "APPLICATION/JSON",
            "text/html, application/json;q=0.5",
            "application/problem+json",
            "text/html;q=0.9, */*;q=0.1",
            "",
        ] {
            assert!(accepts_json(ok), "{ok:?} should be served");
        }
        for no in [
            "text/html",
            "application/json;q=0",
            "application/json; q=0.0, text/*",
            "application/xml",
            "*/*;q=0",
            "application/json;q=abc",
        ] {
            assert!(!accepts_json(no), "{no:?} should be 406");
        }
    }

    #[test]
    fn content_type_rules() {
        let json = Ok(Some(BodyFormat::Json));
        assert_eq!(BodyFormat::parse("application/json", false), json);
        assert_eq!(
            BodyFormat::parse("Application/JSON; charset=UTF-8", false),
            json
        );
        assert_eq!(
            BodyFormat::parse("application/json;charset=\"utf-8\"", false),
            json
        );
        assert_eq!(
            BodyFormat::parse("application/merge-patch+json", true),
            json
        );
        assert_eq!(
            BodyFormat::parse("application/x-www-form-urlencoded; charset=utf-8", false),
            Ok(Some(BodyFormat::Form))
        );
        for bad in [
            "text/plain",
            "application/json; charset=latin1",
            "application/merge-patch+json",
            "",
        ] {
            let status = BodyFormat::parse(bad, false).map_err(|e| e.status());
            assert_eq!(status, Err(415), "{bad:?}");
        }
    }

    #[test]
    fn json_keeps_duplicates_and_order() {
        let fields = decode_json(br#"{"b": 1, "a": "x", "b": true}"#).unwrap();
        let names: Vec<_> = fields.iter().map(|(n, _)| &**n).collect();
        assert_eq!(names, ["b", "a", "b"]);
    }

    #[test]
    fn json_names_are_borrowed_unless_escaped() {
        let fields = decode_json(br#"{"title": 1, "ti\u0074le": 2}"#).unwrap();
        assert!(matches!(fields[0].0, Cow::Borrowed("title")));
        assert!(matches!(&fields[1].0, Cow::Owned(name) if name == "title"));
    }

    #[test]
    fn json_errors_say_where_or_are_422() {
        let err = decode_json(b"{\n \"a\": }").unwrap_err();
        assert_eq!(err.status(), 400);
        assert!(err.to_string().contains("line 2, column"), "{err}");
        assert_eq!(decode_json(b"[1, 2]").unwrap_err().status(), 422);
        assert_eq!(decode_json(b"\"text\"").unwrap_err().status(), 422);
        assert_eq!(decode_json(b"{} {}").unwrap_err().status(), 400);
        assert_eq!(decode_json(b"{\"a\": \"\xff\"}").unwrap_err().status(), 400);
        assert_eq!(decode_json(b"[1, 2").unwrap_err().status(), 400);
        let deep = format!("{{\"a\": {}}}", "[".repeat(10_000));
        assert_eq!(decode_json(deep.as_bytes()).unwrap_err().status(), 400);
        assert_eq!(
            decode_json("[".repeat(10_000).as_bytes())
                .unwrap_err()
                .status(),
            400
        );
    }

    #[test]
    fn form_decoding() {
        let fields = decode_form(b"userId=1&title=Buy+milk%21&completed=false").unwrap();
        assert_eq!(
            fields[1],
            (Cow::from("title"), Input::Text("Buy milk!".into()))
        );
        for bad in [
            &b"title"[..],
            b"=x",
            b"title=%zz",
            b"title=%ff",
            b"title=%+1",
            b"title=%",
            b"a=1&&b=2",
            b"\xff=1",
        ] {
            assert_eq!(decode_form(bad).unwrap_err().status(), 400, "{bad:?}");
        }
        let err = decode_form(b"{\"title\": \"x\"}").unwrap_err();
        assert!(err.hint().unwrap_or("").contains("application/json"));
    }

    #[test]
    fn query_decoding() {
        let pairs = query_pairs(Some("a=1&&b=x+y%21&c&=&%C3%A9=%e2%82%AC")).unwrap();
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(n, v)| (&**n, &**v)).collect();
        assert_eq!(
            pairs,
            [("a", "1"), ("b", "x y!"), ("c", ""), ("", ""), ("é", "€")]
        );
        assert!(matches!(
            query_pairs(Some("plain=text")).unwrap()[0].1,
            Cow::Borrowed(_)
        ));
        assert!(query_pairs(None).unwrap().is_empty());
        for (bad, named) in [
            ("t=%", "'t'"),
            ("t=%f", "'t'"),
            ("t=%zz", "'t'"),
            ("t=%+1", "'t'"),
            ("t=%ff", "'t'"),
            ("t=%C3", "'t'"),
            ("a=1&%e9=2", "'%e9'"),
            ("n%=2", "'n%'"),
        ] {
            let err = query_pairs(Some(bad)).unwrap_err();
            assert_eq!(err.status(), 400, "{bad}");
            assert!(err.to_string().contains(named), "{bad}: {err}");
        }
    }

    fn request<'a>(target: &'a str, body: &'a mut dyn Read) -> Request<'a> {
        Request {
            method: Method::Post,
            method_name: "POST",
            target,
            headers: vec![("Content-Type", "application/json".into())],
            content_length: None,
            body,
            max_body_bytes: 8,
        }
    }

    #[test]
    fn body_cap_from_length_and_while_reading() {
        let mut body: &[u8] = b"{\"a\":1}";
        let mut req = request("/", &mut body);
        req.content_length = Some(9);
        assert_eq!(req.fields(false).unwrap_err().status(), 413);

        let mut long: &[u8] = b"{\"a\":12345}";
        assert_eq!(
            request("/", &mut long).fields(false).unwrap_err().status(),
            413
        );

        let mut fits: &[u8] = b"{\"a\":1}";
        assert!(request("/", &mut fits).fields(false).is_ok());

        let mut none: &[u8] = b"";
        assert_eq!(
            request("/", &mut none).fields(false).unwrap_err().status(),
            400
        );
    }

    #[test]
    fn query_string_is_named() {
        let mut body: &[u8] = b"";
        assert!(request("/api/todos?", &mut body).forbid_query().is_ok());
        let err = request("/api/todos?&foo=1", &mut body)
            .forbid_query()
            .unwrap_err();
        assert!(err.to_string().contains("'foo'"), "{err}");
    }
}
