//! The transport's pieces that need no socket: request ids, and a
//! request's framing. Everything else, the connection's path included, is
//! tested over real sockets in `tests/api/` (`wire.rs`, `hardening.rs`,
//! `shutdown.rs`, `capacity.rs`, `lifecycle.rs`, `faults.rs`).

#[test]
fn a_client_request_id_is_echoed_only_when_sane() {
    use super::connection::{request_id, sane_request_id};
    for sane in [
        "a",
        "abc-123",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "trace:1.2_3",
        &"x".repeat(64),
    ] {
        assert!(sane_request_id(sane), "{sane:?}");
        let headers = vec![("X-Request-Id", sane.to_string())];
        assert_eq!(request_id(&headers), sane);
    }
    for insane in [
        "",
        &"x".repeat(65),
        "a b",
        "a\r\nSet-Cookie: x=1",
        "a\tb",
        "a\"b",
        "é",
        "a/b",
        "a\u{0}",
    ] {
        assert!(!sane_request_id(insane), "{insane:?}");
        let headers = vec![("X-Request-Id", insane.to_string())];
        let made = request_id(&headers);
        assert_ne!(made, insane);
        assert!(sane_request_id(&made), "{made:?}");
    }
}

#[test]
fn made_request_ids_differ_and_share_the_process_prefix() {
    let first = super::connection::request_id(&[]);
    let second = super::connection::request_id(&[]);
    assert_ne!(first, second);
    let prefix = |id: &str| id.rsplit_once('-').map(|(p, _)| p.to_string());
    assert_eq!(prefix(&first), prefix(&second));
    assert_eq!(prefix(&first).map(|p| p.len()), Some(12));
}
