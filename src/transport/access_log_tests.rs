use super::*;

/// A line with no remote address, no bytes, no time taken.
fn plain<'a>(method: &'a str, target: &'a str, status: u16) -> Line<'a> {
    Line {
        remote: None,
        method,
        target,
        status,
        probe: false,
        bytes: 0,
        elapsed: Duration::ZERO,
        id: "abc-1",
    }
}

#[test]
fn a_line_reads_as_the_log_writes_its_lines() {
    let mut out = Vec::new();
    let line = |remote: &str, elapsed| Line {
        remote: remote.parse().ok(),
        method: "GET",
        target: "/api/todos?_page=2",
        status: 200,
        probe: false,
        bytes: 312,
        elapsed,
        id: "abc-1",
    };
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_248_889_123);
    let info = log::Level::Info;
    write_line(
        &mut out,
        info,
        &line("127.0.0.1:50000", Duration::from_micros(41)),
        at,
    );
    write_line(
        &mut out,
        info,
        &line("[::1]:8080", Duration::from_micros(12_345_678)),
        at,
    );
    write_line(&mut out, log::Level::Debug, &line("-", Duration::ZERO), at);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "2026-11-21T08:14:49.123Z INFO  [widgets-todos] 127.0.0.1:50000 GET /api/todos?_page=2 200 head+body=312B 0.041ms id=abc-1\n\
         2026-11-21T08:14:49.123Z INFO  [widgets-todos] [::1]:8080 GET /api/todos?_page=2 200 head+body=312B 12345.678ms id=abc-1\n\
         2026-11-21T08:14:49.123Z DEBUG [widgets-todos] - GET /api/todos?_page=2 200 head+body=312B 0.000ms id=abc-1\n"
    );
}

#[test]
fn control_characters_are_written_escaped() {
    let mut out = Vec::new();
    let target = "/api/todos\x1b[2J\x08\x0b\x0c\x00\x7f\t\r\n\\x1b\u{85}é";
    let line = plain("G\x1b[1mET", target, 404);
    write_line(&mut out, log::Level::Info, &line, SystemTime::UNIX_EPOCH);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        &text[24..],
        " INFO  [widgets-todos] - G\\x1b[1mET \
         /api/todos\\x1b[2J\\x08\\x0b\\x0c\\x00\\x7f\\x09\\x0d\\x0a\\x5cx1b\\u{85}é \
         404 head+body=0B 0.000ms id=abc-1\n"
    );
    // What needs no escape is written as it is, without a copy.
    assert!(matches!(escaped("/api/todos?q=a%20b"), Cow::Borrowed(_)));
}

#[test]
fn timestamps_match_the_calendar() {
    let at = |secs: u64, millis: u64| {
        let mut out = Vec::new();
        let line = plain("GET", "/", 200);
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis);
        write_line(&mut out, log::Level::Info, &line, now);
        String::from_utf8(out).unwrap()[..24].to_string()
    };
    assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
    // 2000-02-29 (a leap day in a year divisible by 400).
    assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
    assert_eq!(at(1_795_248_889, 123), "2026-11-21T08:14:49.123Z");
    assert_eq!(at(4_102_444_799, 999), "2099-12-31T23:59:59.999Z");
}
