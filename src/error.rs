//! Every way a request can fail, and the one place that turns a failure into
//! an HTTP status.
//!
//! Handlers return `Result<Response, ApiError>`. They never pick a status
//! code for an error themselves: they pick a variant, and
//! [`ApiError::status`] decides the code. `http` then renders every variant
//! the same way,
//! as an RFC 9457 problem document, so a client sees one error format whatever
//! went wrong.

use std::fmt;
use std::sync::{Mutex, MutexGuard};

/// Takes a lock, and takes it back when a thread panicked while holding it
/// (the lock is "poisoned"): the server decides this once, here. Whatever a
/// lock of this server guards is changed in steps that each leave it whole
/// (a push, a pop, an assignment, one item replaced), so a panic cannot
/// leave it half done; the poison is cleared, and the panic logged.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| {
        log::warn!(target: crate::logging::LOG, "a thread panicked while holding a lock; what it guards is whole, carrying on");
        mutex.clear_poison();
        poisoned.into_inner()
    })
}

/// One field of a request body that failed validation, as a 422's
/// `errors` object and `message` tell it (`http/problem.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's name as the client sent it (or `""` for the body as a whole).
    pub field: String,
    /// What is wrong, phrased to follow the field name: "is required".
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A request that cannot be served, with what the client needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 400: the request is malformed (bad JSON or form syntax, invalid UTF-8,
    /// empty body, bad query string, ambiguous framing). `hint`, when we
    /// can say, tells how to fix it.
    BadRequest {
        detail: String,
        hint: Option<String>,
    },
    /// 401: `--auth-token` is set and the request lacks that bearer token.
    Unauthorized { detail: String },
    /// 404: no route has this path, the id is malformed, or no item has it.
    /// `hint` names the path meant, when we can tell (`/todos/1` is
    /// `/api/todos/1`).
    NotFound {
        detail: String,
        hint: Option<String>,
    },
    /// 405: the path exists but not with this method. `allow` is the value of
    /// the `Allow` header (RFC 9110 section 15.5.6 requires it); `hint`
    /// replaces the usual one ("use one of the methods in the Allow
    /// header") when there is more to say.
    MethodNotAllowed {
        method: String,
        allow: String,
        hint: Option<String>,
    },
    /// 406: the `Accept` header rules out every type this server produces.
    NotAcceptable,
    /// 408: the body did not arrive within `--read-timeout`.
    RequestTimeout,
    /// 412: `If-Match` names no current version of the item.
    PreconditionFailed { detail: String },
    /// 413: the body is larger than `--max-body-bytes`.
    ContentTooLarge { limit: usize },
    /// 415: the body's `Content-Type` is missing or not one we decode;
    /// `hint` names those we do.
    UnsupportedMediaType { detail: String, hint: String },
    /// 422: the body parsed but its content is invalid; every offending field
    /// is listed. `subject` names what was checked ("todo", "request body").
    Invalid {
        subject: &'static str,
        errors: Vec<FieldError>,
    },
    /// 507: the collection already holds `--max-items` items.
    InsufficientStorage { subject: &'static str, limit: usize },
    /// 507: a number the server hands out has run out: a collection's ids
    /// (the last is 2^53-1) or, with `--data`, the journal's record
    /// numbers. Nothing was changed; `hint` says what to do.
    Exhausted { detail: String, hint: &'static str },
    /// 503: the data file (`--data`) cannot be written; no change is taken.
    StorageUnavailable { detail: String },
    /// 503 from `/healthz`: the server cannot serve as it should (most of
    /// its connections are stuck); `detail` says why.
    Unavailable { detail: String },
    /// 503 from `/api/events`: it has `--max-subscribers` already.
    TooManySubscribers { limit: usize },
    /// 500: a bug. The detail goes to the log, never to the client.
    Internal,
    /// 501: the request needs something this server does not implement (a
    /// transfer coding other than chunked, RFC 9112 section 6.1).
    NotImplemented { detail: String },
    /// Any error status (`config/fault_settings.rs` says which), asked for with
    /// `_status` or given by `--fail-rate`, with `--faults` on: nothing was
    /// read or changed (`app/faults.rs`).
    OnPurpose { status: u16, detail: String },
}

impl ApiError {
    /// The status code of each variant; the only place errors become numbers.
    pub fn status(&self) -> u16 {
        match self {
            ApiError::BadRequest { .. } => 400,
            ApiError::Unauthorized { .. } => 401,
            ApiError::NotFound { .. } => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::NotAcceptable => 406,
            ApiError::RequestTimeout => 408,
            ApiError::PreconditionFailed { .. } => 412,
            ApiError::ContentTooLarge { .. } => 413,
            ApiError::UnsupportedMediaType { .. } => 415,
            ApiError::Invalid { .. } => 422,
            ApiError::Internal => 500,
            ApiError::NotImplemented { .. } => 501,
            ApiError::StorageUnavailable { .. }
            | ApiError::Unavailable { .. }
            | ApiError::TooManySubscribers { .. } => 503,
            ApiError::InsufficientStorage { .. } | ApiError::Exhausted { .. } => 507,
            ApiError::OnPurpose { status, .. } => *status,
        }
    }

    /// A 400 with a detail and no hint.
    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            detail: detail.into(),
            hint: None,
        }
    }

    /// A 404 with a detail and no hint.
    pub fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::NotFound {
            detail: detail.into(),
            hint: None,
        }
    }

    /// How to fix the request, when we can say; the `hint` member.
    pub fn hint(&self) -> Option<&str> {
        match self {
            ApiError::BadRequest { hint, .. } | ApiError::NotFound { hint, .. } => hint.as_deref(),
            ApiError::Exhausted { hint, .. } => Some(hint),
            ApiError::MethodNotAllowed { hint, .. } => Some(
                hint.as_deref()
                    .unwrap_or("use one of the methods in the Allow header"),
            ),
            ApiError::Unauthorized { .. } => Some("send Authorization: Bearer <token>"),
            ApiError::NotAcceptable => {
                Some("accept application/json or application/problem+json, or omit Accept")
            }
            ApiError::UnsupportedMediaType { hint, .. } => Some(hint),
            ApiError::PreconditionFailed { .. } => {
                Some("GET the item again for its current ETag, then retry with that in If-Match")
            }
            ApiError::Unavailable { .. } => Some(
                "put a reverse proxy in front of this server: see docs/limits.md, nginx in front",
            ),
            ApiError::TooManySubscribers { .. } => Some(
                "retry after the seconds of Retry-After, or start the server with a higher \
                 --max-subscribers",
            ),
            _ => None,
        }
    }
}

/// The `detail` member: one sentence for a person.
impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::BadRequest { detail, .. } => f.write_str(detail),
            ApiError::NotFound { detail, .. } => f.write_str(detail),
            ApiError::Unauthorized { detail } => f.write_str(detail),
            ApiError::MethodNotAllowed { method, allow, .. } => {
                write!(f, "{method} is not allowed here; allowed: {allow}")
            }
            ApiError::NotAcceptable => f.write_str(
                "this server only produces application/json and application/problem+json",
            ),
            ApiError::RequestTimeout => f.write_str("the request body did not arrive in time"),
            ApiError::ContentTooLarge { limit } => {
                write!(
                    f,
                    "the request body is larger than the limit of {limit} bytes"
                )
            }
            ApiError::UnsupportedMediaType { detail, .. } => f.write_str(detail),
            ApiError::PreconditionFailed { detail } => f.write_str(detail),
            ApiError::Invalid { subject, errors } => {
                let n = errors.len();
                let s = if n == 1 { "" } else { "s" };
                write!(f, "the {subject} has {n} invalid field{s}")
            }
            ApiError::InsufficientStorage { subject, limit } => {
                write!(
                    f,
                    "cannot create another {subject}: the collection holds its limit of {limit} items"
                )
            }
            ApiError::Exhausted { detail, .. } => f.write_str(detail),
            ApiError::StorageUnavailable { detail }
            | ApiError::Unavailable { detail }
            | ApiError::NotImplemented { detail } => f.write_str(detail),
            ApiError::TooManySubscribers { limit } => write!(
                f,
                "/api/events already has its limit of {limit} subscribers (--max-subscribers)"
            ),
            ApiError::Internal => f.write_str("the server failed to handle this request"),
            ApiError::OnPurpose { detail, .. } => f.write_str(detail),
        }
    }
}

// The error statuses, with their reason phrases: the status line's text
// (RFC 9112 section 4) and a problem document's `title`. Besides the few
// the handlers send, every client and server error status of IANA's HTTP
// Status Code Registry (RFC 9110 section 16.2.1) is here, because
// `_status` (with `--faults`) may ask for any of them (`config/fault_settings.rs`
// says which). The statuses of a request that succeeds are in
// `http.rs`'s `status_text`.

/// The status code and reason phrase of the error `status`; `None` for a
/// status not in the table, 418 and 510 among them, which the registry
/// lists as unused and obsoleted, and for any status below 400.
pub fn error_status_line(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "400 Bad Request",
        401 => "401 Unauthorized",
        402 => "402 Payment Required",
        403 => "403 Forbidden",
        404 => "404 Not Found",
        405 => "405 Method Not Allowed",
        406 => "406 Not Acceptable",
        407 => "407 Proxy Authentication Required",
        408 => "408 Request Timeout",
        409 => "409 Conflict",
        410 => "410 Gone",
        411 => "411 Length Required",
        412 => "412 Precondition Failed",
        413 => "413 Content Too Large",
        414 => "414 URI Too Long",
        415 => "415 Unsupported Media Type",
        416 => "416 Range Not Satisfiable",
        417 => "417 Expectation Failed",
        421 => "421 Misdirected Request",
        422 => "422 Unprocessable Content",
        423 => "423 Locked",
        424 => "424 Failed Dependency",
        425 => "425 Too Early",
        426 => "426 Upgrade Required",
        428 => "428 Precondition Required",
        429 => "429 Too Many Requests",
        431 => "431 Request Header Fields Too Large",
        451 => "451 Unavailable For Legal Reasons",
        500 => "500 Internal Server Error",
        501 => "501 Not Implemented",
        502 => "502 Bad Gateway",
        503 => "503 Service Unavailable",
        504 => "504 Gateway Timeout",
        505 => "505 HTTP Version Not Supported",
        506 => "506 Variant Also Negotiates",
        507 => "507 Insufficient Storage",
        508 => "508 Loop Detected",
        511 => "511 Network Authentication Required",
        _ => return None,
    })
}
