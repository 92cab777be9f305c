//! Errors as responses: every [`ApiError`] becomes an RFC 9457 problem
//! document here, and nowhere else. The document's `instance` member, the
//! request's id, is added with the `X-Request-Id` field once the response
//! is made: [`Response::identify`].
//!
//! Besides RFC 9457's members, three extension members (section 3.2 allows
//! them) serve the clients people point at this server:
//!
//! - `message`, the sentence a person reads, in every document: the
//!   `detail`, then on a 422 each field's error, then the `hint`. It is the
//!   member react-admin's `fetchJson` and Refine's providers show in their
//!   error notifications.
//! - `errors`, on a 422: an object with one member per invalid field, its
//!   error as a string (`{"title": "is required"}`), and `root` with
//!   `serverError`, the `message`. That is the shape react-admin puts on
//!   its inputs (it reads `body.errors` into its form, and shows
//!   `root.serverError` as the form's notification) and Refine's
//!   `ValidationErrors`. An error about the body as a whole, or about a
//!   field sent as `root`, has no input to land on: the `message` tells it.
//! - `hint`, when we can say how to fix the request.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{Body, PROBLEM_JSON, Response, reason_phrase};
use crate::error::{ApiError, FieldError};

/// The problem+json member names of RFC 9457, plus our `message`,
/// `errors` and `hint`.
#[derive(serde::Serialize)]
struct Problem<'a> {
    #[serde(rename = "type")]
    problem_type: &'static str,
    title: &'static str,
    status: u16,
    detail: String,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<Fields<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
}

/// The `errors` member of a 422: each invalid field's error by the field's
/// name, then `root.serverError` (see the module comment).
struct Fields<'a> {
    errors: &'a [FieldError],
    message: &'a str,
}

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // One member per name: a second error about the same field (none
        // of our rules makes one today) joins the first.
        let mut fields: Vec<(&str, String)> = Vec::with_capacity(self.errors.len());
        for FieldError { field, message } in self.errors {
            if field.is_empty() || field == "root" {
                continue;
            }
            match fields.iter_mut().find(|(name, _)| name == field) {
                Some((_, joined)) => {
                    joined.push_str("; ");
                    joined.push_str(message);
                }
                None => fields.push((field, message.clone())),
            }
        }
        let mut map = serializer.serialize_map(Some(fields.len() + 1))?;
        for (name, message) in &fields {
            map.serialize_entry(name, message)?;
        }
        map.serialize_entry(
            "root",
            &Root {
                server_error: self.message,
            },
        )?;
        map.end()
    }
}

/// `root` in `errors`: react-admin's name for an error of the whole form.
#[derive(serde::Serialize)]
struct Root<'a> {
    #[serde(rename = "serverError")]
    server_error: &'a str,
}

/// The `message` member: the `detail`; on a 422, each field's error after
/// it (`the todo has 2 invalid fields: userId must be ...; title is
/// required`); then the `hint`, if any.
fn message(err: &ApiError, detail: &str) -> String {
    let mut message = detail.to_string();
    if let ApiError::Invalid { errors, .. } = err {
        for (
            i,
            FieldError {
                field,
                message: why,
            },
        ) in errors.iter().enumerate()
        {
            message.push_str(if i == 0 { ": " } else { "; " });
            if !field.is_empty() {
                message.push_str(field);
                message.push(' ');
            }
            message.push_str(why);
        }
    }
    if let Some(hint) = err.hint() {
        message.push_str("; ");
        message.push_str(hint);
    }
    message
}

/// Every error becomes a problem document here, and nowhere else.
impl From<ApiError> for Response {
    fn from(err: ApiError) -> Response {
        let status = err.status();
        let detail = err.to_string();
        let message = message(&err, &detail);
        let errors = match &err {
            ApiError::Invalid { errors, .. } => Some(Fields {
                errors,
                message: &message,
            }),
            _ => None,
        };
        let problem = Problem {
            problem_type: "about:blank",
            title: reason_phrase(status),
            status,
            detail,
            message: &message,
            errors,
            hint: err.hint(),
        };
        // Serializing this struct of strings cannot fail; fall back to a
        // fixed document rather than recurse into `Response::json`.
        let bytes = serde_json::to_vec(&problem).unwrap_or_else(|_| {
            br#"{"type":"about:blank","title":"Internal Server Error","status":500,"message":"Internal Server Error"}"#.to_vec()
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
/// request log counts its length into the size of the body sent.
pub(crate) fn instance_member(id: &str) -> Option<String> {
    let instance = serde_json::to_string(&format!("urn:request:{id}")).ok()?;
    Some(format!(",\"instance\":{instance}"))
}
