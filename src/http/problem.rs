//! Errors as responses: every [`ApiError`] becomes an RFC 9457 problem
//! document here, and nowhere else.

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
