//! Errors as responses: every [`ApiError`] becomes an RFC 9457 problem
//! document here, and nowhere else. The document's `instance` member, the
//! request's id, is added with the `X-Request-Id` field once the response
//! is made: [`Response::identify`].

use super::{Body, PROBLEM_JSON, Response, reason_phrase};
use crate::error::{ApiError, FieldError};

/// The problem+json member names of RFC 9457, plus our `errors` and `hint`.
#[derive(serde::Serialize)]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'static str,
    status: u16,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
}

/// Every error becomes a problem document here, and nowhere else.
impl From<ApiError> for Response {
    fn from(err: ApiError) -> Response {
        let status = err.status();
        let errors = match &err {
            ApiError::Invalid { errors, .. } => Some(errors.as_slice()),
            _ => None,
        };
        let problem = Problem {
            kind: "about:blank",
            title: reason_phrase(status),
            status,
            detail: err.to_string(),
            errors,
            hint: err.hint(),
        };
        // Serializing this struct of strings cannot fail; fall back to a
        // fixed document rather than recurse into `Response::json`.
        let bytes = serde_json::to_vec(&problem).unwrap_or_else(|_| {
            br#"{"type":"about:blank","title":"Internal Server Error","status":500}"#.to_vec()
        });
        let response = Response::bytes(status, PROBLEM_JSON, Body::Owned(bytes));
        match err {
            ApiError::MethodNotAllowed { allow, .. } => response.with_header("Allow", allow),
            ApiError::Unauthorized { .. } => response.with_header("WWW-Authenticate", "Bearer"),
            _ => response,
        }
    }
}

/// Adds the `instance` member (RFC 9457 section 3.1.5, a URI reference
/// naming this occurrence of the problem) to a problem document:
/// `urn:request:<id>`. A bare id is no URI reference when it holds a `:`
/// before any `/` (it would read as a scheme), and a relative one would
/// resolve against the request's URI to a resource that does not exist; a
/// URN names without pretending to locate.
pub(super) fn add_instance(response: &mut Response, id: &str) {
    if let Some((PROBLEM_JSON, Body::Owned(bytes))) = &mut response.body {
        // Our documents are one object: the member goes before its `}`.
        if let (Some(b'}'), Some(member)) = (bytes.last(), instance_member(id)) {
            bytes.pop();
            bytes.extend_from_slice(member.as_bytes());
            bytes.push(b'}');
        }
    }
}

/// The member `add_instance` adds, `,"instance":"urn:request:<id>"`; the
/// request journal counts its length into the size of the body sent.
pub(crate) fn instance_member(id: &str) -> Option<String> {
    let instance = serde_json::to_string(&format!("urn:request:{id}")).ok()?;
    Some(format!(",\"instance\":{instance}"))
}
