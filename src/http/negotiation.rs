//! Media types: what an `Accept` field admits, or prefers (content
//! negotiation, RFC 9110 section 12), and the format a request body's
//! `Content-Type` names (section 8.3).

use crate::error::ApiError;

/// Whether an `Accept` value admits a JSON response: it names `*/*`,
/// `application/*`, `application/json` or `application/problem+json` with
/// a q-value above 0. Blank counts as absent.
pub fn accepts_json(accept: &str) -> bool {
    if accept.trim().is_empty() {
        return true;
    }
    ranges(accept).any(|(media, q)| {
        let served = matches!(
            media.as_str(),
            "*/*" | "application/*" | "application/json" | "application/problem+json"
        );
        served && q > 0.0
    })
}

/// Whether an `Accept` value admits the media type `top_level/subtype`: a
/// range that matches it (by name, `top_level/*` or `*/*`) has a q-value above
/// 0. Blank counts as absent.
pub fn admits(accept: &str, top_level: &str, subtype: &str) -> bool {
    accept.trim().is_empty() || quality(accept, top_level, subtype) > 0.0
}

/// Whether `Accept` names `media` itself with a q-value above 0.
pub fn names(accept: Option<&str>, media: &str) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    ranges(accept).any(|(range, q)| range.eq_ignore_ascii_case(media) && q > 0.0)
}

/// Whether `Accept` prefers HTML to JSON: `text/html` gets a higher
/// q-value than `application/json`, each weighed by the most specific
/// range that matches it (section 12.5.1: `text/html` before `text/*`
/// before `*/*`). A browser's `text/html,...,*/*;q=0.8` does; curl's
/// `*/*`, no `Accept`, or a tie does not.
pub fn prefers_html(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    quality(accept, "text", "html") > quality(accept, "application", "json")
}

/// The q-value `accept` gives to the media type `top_level/subtype`: that of
/// the most specific range matching it, or 0 when none does.
fn quality(accept: &str, top_level: &str, subtype: &str) -> f32 {
    let exact = format!("{top_level}/{subtype}");
    let any_subtype = format!("{top_level}/*");
    let mut best: Option<(u8, f32)> = None;
    for (media, q) in ranges(accept) {
        let specificity = if media == exact {
            3
        } else if media == any_subtype {
            2
        } else if media == "*/*" {
            1
        } else {
            continue;
        };
        if best.is_none_or(|(most, _)| specificity > most) {
            best = Some((specificity, q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

/// The media ranges of an `Accept` value, lowercased, each with its
/// q-value: 1 when absent, 0 when malformed.
fn ranges(accept: &str) -> impl Iterator<Item = (String, f32)> + '_ {
    accept.split(',').map(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|param| param.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map_or(Some(1.0), |(_, q)| q.trim().parse::<f32>().ok())
            .filter(|q| (0.0..=1.0).contains(q))
            .unwrap_or(0.0);
        (media, q)
    })
}

/// The hint of a 415: the media types a body may have.
pub(super) fn media_types_hint(merge_patch: bool) -> String {
    let also = if merge_patch {
        ", application/merge-patch+json"
    } else {
        ""
    };
    format!("send Content-Type: application/json{also} or application/x-www-form-urlencoded")
}

/// The body formats we decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Form,
}

impl BodyFormat {
    /// The format a `Content-Type` value names (RFC 9110 section 8.3). Type
    /// and subtype are case-insensitive; a `charset` must be UTF-8; other
    /// parameters are ignored. Anything else is 415.
    pub fn of(value: &str, merge_patch: bool) -> Result<BodyFormat, ApiError> {
        let mut parts = value.split(';');
        let media = parts.next().unwrap_or("").trim();
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        let format =
            if is("application/json") || (merge_patch && is("application/merge-patch+json")) {
                BodyFormat::Json
            } else if is("application/x-www-form-urlencoded") {
                BodyFormat::Form
            } else {
                return Err(ApiError::UnsupportedMediaType {
                    detail: format!("Content-Type '{}' is not supported", value.trim()),
                    hint: media_types_hint(merge_patch),
                });
            };
        for (name, charset) in parts.filter_map(|param| param.split_once('=')) {
            let charset = charset.trim().trim_matches('"');
            if name.trim().eq_ignore_ascii_case("charset") && !charset.eq_ignore_ascii_case("utf-8")
            {
                return Err(ApiError::UnsupportedMediaType {
                    detail: format!("charset '{charset}' is not supported"),
                    hint: "send the body in UTF-8, with charset=utf-8 or no charset".into(),
                });
            }
        }
        Ok(format)
    }
}
