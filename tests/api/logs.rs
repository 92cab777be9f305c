//! Logs a person reads: the access lines of requests answered before a
//! stop come before the stop's lines; each line's size says what it
//! counts; `info` lines name no module; `/healthz`, which probes ask every
//! few seconds, is logged only at `debug`; a `_like` written as a regular
//! expression gets a line saying it is read as text.

use crate::cli::{get, spawn, stop_with};

/// One worker, so that each request's line is recorded before the next
/// request is handled: once the last answer is read, the lines of the
/// others are in the access log's buffer, not yet written out.
#[test]
fn access_lines_come_before_the_lines_of_the_stop() {
    for round in 0..3 {
        let (child, addr) = spawn(&["--port", "0", "--threads", "1"], &[]);
        for _ in 0..5 {
            get(&addr, "/api/todos");
        }
        // Its own line may be recorded after the signal; the others' may not.
        get(&addr, "/api");
        // At once: well within the access log's 50 ms between writes.
        let (code, log) = stop_with(child, "-TERM");
        assert_eq!(code, Some(0), "{log}");
        let lines: Vec<&str> = log.lines().collect();
        let last_access = lines
            .iter()
            .rposition(|l| l.contains(" GET /api/todos 200 "));
        let signal = lines.iter().position(|l| l.contains("signal 15 received"));
        let (Some(last_access), Some(signal)) = (last_access, signal) else {
            panic!("round {round}: missing lines:\n{log}");
        };
        assert!(
            last_access < signal,
            "round {round}: an access line after the stop's:\n{log}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains(" GET /api/todos 200 "))
                .count(),
            5,
            "{log}"
        );
    }
}

#[test]
fn the_size_says_what_it_counts_and_info_names_no_module() {
    let (child, addr) = spawn(&["--port", "0"], &[]);
    let sent = get(&addr, "/api").len();
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let line = log
        .lines()
        .find(|l| l.contains(" GET /api 200 "))
        .unwrap_or_else(|| panic!("no access line:\n{log}"));
    // The head and the 47 bytes of body, as written to the connection.
    assert!(
        line.contains(&format!(" GET /api 200 head+body={sent}B ")),
        "{line} ({sent} bytes sent)"
    );
    assert!(sent > 47 + 100, "{sent}");
    for line in log
        .lines()
        .filter(|l| l.contains(" INFO ") || l.contains(" WARN "))
    {
        assert!(
            !line.contains("[widgets_todos"),
            "a module path at info: {line}"
        );
    }
    assert!(
        log.contains(" INFO  [widgets-todos] signal 15 received"),
        "{log}"
    );
}

#[test]
fn the_health_check_is_logged_only_at_debug() {
    let (child, addr) = spawn(&["--port", "0"], &[]);
    get(&addr, "/healthz");
    get(&addr, "/api");
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains(" GET /api 200 "), "{log}");
    assert!(!log.contains("/healthz"), "{log}");

    let (child, addr) = spawn(&["--port", "0", "--log-level", "debug"], &[]);
    get(&addr, "/healthz");
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let line = log
        .lines()
        .find(|l| l.contains(" GET /healthz 200 "))
        .unwrap_or_else(|| panic!("no /healthz line at debug:\n{log}"));
    assert!(line.contains(" DEBUG "), "{line}");
}
