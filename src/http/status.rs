//! The error statuses, with their reason phrases: the status line's text
//! (RFC 9112 section 4) and a problem document's `title`. Besides the few
//! the handlers send, every client and server error status of IANA's HTTP
//! Status Code Registry (RFC 9110 section 16.2.1) is here, because
//! `_status` (with `--faults`) may ask for any of them (`config/faults.rs`
//! says which). Only an error comes here: the statuses of a request that
//! succeeds are in `mod.rs`'s `status_text`.

/// The status code and reason phrase of the error `status`; `None` for a
/// status not in the table, 418 and 510 among them, which the registry
/// lists as unused and obsoleted, and for any status below 400.
pub fn error(status: u16) -> Option<&'static str> {
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
