//! Reading a request (negotiation, body formats, the query) and encoding a
//! response, on byte strings.

use super::*;
use crate::model::Input;

#[test]
fn accept_rules() {
    for ok in [
        "application/json",
        "*/*",
        "application/*",
        "APPLICATION/JSON",
        "text/html, application/json;q=0.5",
        "application/problem+json",
        "text/html;q=0.9, */*;q=0.1",
        "",
    ] {
        assert!(accepts_json(ok), "{ok:?} should be served");
    }
    for no in [
        "text/html",
        "application/json;q=0",
        "application/json; q=0.0, text/*",
        "application/xml",
        "*/*;q=0",
        "application/json;q=abc",
    ] {
        assert!(!accepts_json(no), "{no:?} should be 406");
    }
}

#[test]
fn content_type_rules() {
    let json = Ok(BodyFormat::Json);
    assert_eq!(BodyFormat::of("application/json", false), json);
    assert_eq!(
        BodyFormat::of("Application/JSON; charset=UTF-8", false),
        json
    );
    assert_eq!(
        BodyFormat::of("application/json;charset=\"utf-8\"", false),
        json
    );
    assert_eq!(BodyFormat::of("application/merge-patch+json", true), json);
    assert_eq!(
        BodyFormat::of("application/x-www-form-urlencoded; charset=utf-8", false),
        Ok(BodyFormat::Form)
    );
    for bad in [
        "text/plain",
        "application/json; charset=latin1",
        "application/merge-patch+json",
        "",
    ] {
        let status = BodyFormat::of(bad, false).map_err(|e| e.status());
        assert_eq!(status, Err(415), "{bad:?}");
    }
}

#[test]
fn json_keeps_duplicates_and_order() {
    let fields = decode_json(br#"{"b": 1, "a": "x", "b": true}"#).unwrap();
    let names: Vec<_> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "a", "b"]);
}

#[test]
fn json_errors_say_where_or_are_422() {
    let err = decode_json(b"{\n \"a\": }").unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(err.to_string().contains("line 2, column"), "{err}");
    assert_eq!(decode_json(b"[1, 2]").unwrap_err().status(), 422);
    assert_eq!(decode_json(b"\"text\"").unwrap_err().status(), 422);
    assert_eq!(decode_json(b"{} {}").unwrap_err().status(), 400);
    assert_eq!(decode_json(b"{\"a\": \"\xff\"}").unwrap_err().status(), 400);
    assert_eq!(decode_json(b"[1, 2").unwrap_err().status(), 400);
    let deep = format!("{{\"a\": {}}}", "[".repeat(10_000));
    assert_eq!(decode_json(deep.as_bytes()).unwrap_err().status(), 400);
    assert_eq!(
        decode_json("[".repeat(10_000).as_bytes())
            .unwrap_err()
            .status(),
        400
    );
}

#[test]
fn form_decoding() {
    let fields = decode_form(b"userId=1&title=Buy+milk%21&completed=false").unwrap();
    assert_eq!(
        fields[1],
        ("title".to_string(), Input::Text("Buy milk!".into()))
    );
    for bad in [
        &b"title"[..],
        b"=x",
        b"title=%zz",
        b"title=%ff",
        b"title=%+1",
        b"title=%",
        b"a=1&&b=2",
        b"\xff=1",
    ] {
        assert_eq!(decode_form(bad).unwrap_err().status(), 400, "{bad:?}");
    }
    let err = decode_form(b"{\"title\": \"x\"}").unwrap_err();
    assert!(err.hint().unwrap_or("").contains("application/json"));
}

#[test]
fn a_form_labelled_json_gets_a_hint_and_broken_json_does_not() {
    let form = "application/x-www-form-urlencoded";
    for body in [&b"title=x&userId=1"[..], b"title=Buy+milk%21", b"a[b]=1\n"] {
        let err = decode_json(body).unwrap_err();
        assert_eq!(err.status(), 400);
        assert!(err.hint().unwrap_or("").contains(form), "{body:?}");
    }
    for body in [
        &b"{\"title\": \"x\""[..],
        b"title",
        b"=x",
        b"a b=1",
        b"{\"a\":1}&b=2",
    ] {
        let err = decode_json(body).unwrap_err();
        assert_eq!(err.hint(), None, "{body:?}");
    }
}

#[test]
fn query_decoding() {
    let pairs = query_pairs("a=1&&b=x+y%21&c&=&%C3%A9=%e2%82%AC").unwrap();
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [("a", "1"), ("b", "x y!"), ("c", ""), ("", ""), ("é", "€")]
    );
    assert!(query_pairs("").unwrap().is_empty());
    for (bad, named) in [
        ("t=%", "'t'"),
        ("t=%f", "'t'"),
        ("t=%zz", "'t'"),
        ("t=%+1", "'t'"),
        ("t=%ff", "'t'"),
        ("t=%C3", "'t'"),
        ("a=1&%e9=2", "'%e9'"),
        ("n%=2", "'n%'"),
    ] {
        let err = query_pairs(bad).unwrap_err();
        assert_eq!(err.status(), 400, "{bad}");
        assert!(err.to_string().contains(named), "{bad}: {err}");
    }
}

fn request<'a>(target: &'a str, body: &'a mut dyn Read) -> Request<'a> {
    Request {
        method: Method::Post,
        method_name: "POST",
        id: "test-1",
        target,
        headers: vec![("Content-Type", "application/json".into())],
        content_length: None,
        body,
        max_body_bytes: 8,
        body_read: None,
    }
}

#[test]
fn body_cap_from_length_and_while_reading() {
    let mut body: &[u8] = b"{\"a\":1}";
    let mut req = request("/", &mut body);
    req.content_length = Some(9);
    assert_eq!(req.fields(false, "{}").unwrap_err().status(), 413);

    let mut long: &[u8] = b"{\"a\":12345}";
    assert_eq!(
        request("/", &mut long)
            .fields(false, "{}")
            .unwrap_err()
            .status(),
        413
    );

    let mut fits: &[u8] = b"{\"a\":1}";
    assert!(request("/", &mut fits).fields(false, "{}").is_ok());

    let mut none: &[u8] = b"";
    assert_eq!(
        request("/", &mut none)
            .fields(false, "{}")
            .unwrap_err()
            .status(),
        400
    );
}

#[test]
fn the_body_read_is_kept_and_one_never_read_is_not() {
    let read = |bytes: &[u8], content_type: &str, length: Option<u64>| {
        let mut body = bytes;
        let mut req = request("/", &mut body);
        req.headers = vec![("Content-Type", content_type.to_string())];
        req.content_length = length;
        let status = req.fields(false, "{}").err().map(|err| err.status());
        (status, req.body_read)
    };
    let json = "application/json";
    assert_eq!(
        read(b"{\"a\":1}", json, None),
        (None, Some(b"{\"a\":1}".to_vec()))
    );
    // Read, then refused: kept as read.
    assert_eq!(
        read(b"{\"a\":", json, None),
        (Some(400), Some(b"{\"a\":".to_vec()))
    );
    assert_eq!(read(b"", json, None), (Some(400), Some(Vec::new())));
    // Refused before a byte is read: none.
    assert_eq!(read(b"{}", "text/plain", None), (Some(415), None));
    assert_eq!(read(b"{}", json, Some(9)), (Some(413), None));
}

/// `Vary` is one field line listing every request field the response
/// depends on (RFC 9110 section 12.5.5), in the order they were added.
#[test]
fn vary_lists_the_fields_on_one_line() {
    let mut response = Response::empty(204);
    response.vary("Accept");
    response.vary("Origin");
    assert_eq!(response.header("Vary"), Some("Accept, Origin"));
    assert_eq!(response.headers.len(), 1);
}

fn text(response: &Response, head_only: bool) -> String {
    String::from_utf8_lossy(&response.encode("Thu, 01 Jan 1970 00:00:00 GMT", head_only, None))
        .into_owned()
}

#[test]
fn encodes_status_line_standard_headers_and_body() {
    let wire = text(&Response::json(200, &[1, 2]), false);
    assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
    assert!(wire.contains("Cache-Control: no-cache\r\n"));
    assert!(wire.contains("Content-Type: application/json\r\n"));
    assert!(wire.ends_with("Content-Length: 5\r\n\r\n[1,2]"), "{wire}");
}

#[test]
fn head_keeps_length_but_drops_body() {
    let wire = text(&Response::json(200, &[1, 2]), true);
    assert!(wire.ends_with("Content-Length: 5\r\n\r\n"), "{wire}");
}

#[test]
fn no_content_has_neither_length_nor_type() {
    let wire = text(&Response::empty(204), false);
    assert!(!wire.contains("Content-Length"), "{wire}");
    assert!(!wire.contains("Content-Type"), "{wire}");
}

#[test]
fn problem_has_rfc_9457_members_and_allow() {
    let response = Response::from(ApiError::MethodNotAllowed {
        method: "PUT".into(),
        allow: "GET, HEAD".into(),
        hint: None,
    });
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("GET, HEAD"));
    let body: serde_json::Value = serde_json::from_slice(response.body_bytes()).unwrap();
    assert_eq!(body["type"], "about:blank");
    assert_eq!(body["title"], "Method Not Allowed");
    assert_eq!(body["status"], 405);
    assert!(body.get("errors").is_none());
}

#[test]
fn a_browser_prefers_html_and_curl_does_not() {
    let firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    assert!(prefers_html(Some(firefox)));
    assert!(prefers_html(Some("text/html")));
    assert!(prefers_html(Some("text/*, application/json;q=0.5")));
    for json in [
        "*/*",
        "application/json",
        "text/html;q=0.5, application/json",
    ] {
        assert!(!prefers_html(Some(json)), "{json}");
    }
    assert!(!prefers_html(None));
}

#[test]
fn identify_adds_the_field_and_the_problem_instance() {
    let mut problem = Response::from(ApiError::NotAcceptable);
    problem.identify("abc-1".to_string());
    assert_eq!(problem.header("X-Request-Id"), Some("abc-1"));
    let body: serde_json::Value = serde_json::from_slice(problem.body_bytes()).unwrap();
    assert_eq!(body["instance"], "urn:request:abc-1");
    assert_eq!(body["status"], 406);

    // Other bodies are left as they are.
    let mut ok = Response::json(200, &serde_json::json!({"id": 1}));
    ok.identify("abc-2".to_string());
    assert_eq!(ok.header("X-Request-Id"), Some("abc-2"));
    assert_eq!(ok.body_bytes(), br#"{"id":1}"#);
    let mut empty = Response::empty(304);
    empty.identify("abc-3".to_string());
    let wire = String::from_utf8(empty.encode("d", false, None)).unwrap();
    assert!(wire.contains("\r\nX-Request-Id: abc-3\r\n"), "{wire}");
}
