//! Check 1 of `app.rs`: with `--auth-token`, the bearer token (RFC 6750)
//! that `/api`, and `/_admin` with the request log on, ask of every request.

use super::{App, Target};
use crate::config::Secret;
use crate::error::ApiError;
use crate::http::{Method, Request};

impl App {
    /// Check 1, with `--auth-token`: on `/api`, and on `/_admin` when the
    /// request log is on, for every method but `OPTIONS` (a browser's
    /// preflight carries no token), 401 unless `Authorization: Bearer
    /// TOKEN`. The comparison takes the same time wherever the tokens
    /// differ, so the time taken does not tell how much of a guessed token
    /// was right.
    pub(super) fn authorize(
        &self,
        expected: &Secret,
        req: &Request<'_>,
        target: Target<'_>,
    ) -> Result<(), ApiError> {
        let guarded = target.in_api() || (target.in_admin() && self.recorder.is_some());
        if !guarded || matches!(req.method, Method::Options) {
            return Ok(());
        }
        let sent = req.header("Authorization").and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("Bearer")
                .then_some(token.trim_start())
        });
        let Some(sent) = sent else {
            return Err(ApiError::Unauthorized {
                detail: "this server needs Authorization: Bearer <token> on /api and /_admin"
                    .into(),
            });
        };
        let (a, b) = (sent.as_bytes(), expected.expose().as_bytes());
        let mut differ = a.len() ^ b.len();
        for i in 0..a.len().max(b.len()) {
            differ |= usize::from(a.get(i).unwrap_or(&0) ^ b.get(i).unwrap_or(&0));
        }
        if differ != 0 {
            return Err(ApiError::Unauthorized {
                detail: "the bearer token is wrong".into(),
            });
        }
        Ok(())
    }
}
