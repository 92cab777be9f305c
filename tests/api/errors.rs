//! Every row of the contract's status table and every rule under "Request
//! bodies": each error is problem+json and changes nothing.

use serde_json::json;

use crate::support::{TestServer, config, error_fields, problem};

const TODO: &str = r#"{"userId": 1, "title": "t"}"#;
const WIDGET: &str = r#"{"price": "$1", "quality": "q"}"#;
/// The fields of a 422 about the body as a whole: none (`message` says it).
const NO_FIELD: [&str; 0] = [];

/// A server holding one widget and one todo, both with id 1.
fn seeded() -> TestServer {
    let server = TestServer::start();
    server.create("/api/widgets", WIDGET);
    server.create("/api/todos", TODO);
    server
}

/// The state of both collections, to prove an error changed nothing.
fn snapshot(server: &TestServer) -> (String, String) {
    (
        server.get("/api/widgets").text(),
        server.get("/api/todos").text(),
    )
}

#[test]
fn bad_request_for_malformed_bodies() {
    let server = seeded();
    let before = snapshot(&server);
    let json = "Content-Type: application/json";
    let form = "Content-Type: application/x-www-form-urlencoded";
    let cases: &[(&str, &str, &[u8], &str)] = &[
        (
            "POST",
            json,
            b"{\"userId\": 1,\n \"title\": }",
            "line 2, column",
        ),
        ("PUT", json, b"{\"completed\": tru}", "column"),
        (
            "POST",
            json,
            b"{\"userId\": 1, \"title\": \"\xff\"}",
            "UTF-8",
        ),
        ("POST", json, b"[1, 2", "line 1"),
        ("POST", json, b"{} trailing", "column"),
        ("PATCH", form, b"completed=%zz", "hex"),
        ("POST", form, b"userId", "="),
        ("POST", form, b"title=%C3%28", "UTF-8"),
    ];
    for (method, content_type, body, detail) in cases {
        let path = if *method == "POST" {
            "/api/todos"
        } else {
            "/api/todos/1"
        };
        let response = server.send(method, path, &[content_type], body);
        let problem = problem(&response, 400);
        let text = problem["detail"].as_str().unwrap();
        assert!(text.contains(detail), "{method} {body:?}: {text}");
    }
    assert_eq!(snapshot(&server), before);
}

#[test]
fn bad_request_for_empty_body() {
    let server = seeded();
    for (method, path) in [
        ("POST", "/api/todos"),
        ("PUT", "/api/todos/1"),
        ("PATCH", "/api/widgets/1"),
    ] {
        let response = server.send(method, path, &["Content-Type: application/json"], b"");
        assert!(
            problem(&response, 400)["detail"]
                .as_str()
                .unwrap()
                .contains("empty")
        );
        // Without Content-Type and without a body it is still the body that is missing.
        problem(&server.send(method, path, &[], b""), 400);
    }
}

#[test]
fn json_sent_as_form_gets_a_hint() {
    let server = seeded();
    // What `curl -d '{...}'` sends without -H.
    let response = server.form("POST", "/api/todos", TODO);
    let body = problem(&response, 400);
    assert!(
        body["hint"]
            .as_str()
            .unwrap()
            .contains("Content-Type: application/json"),
        "{body}"
    );
    problem(
        &server.form("PUT", "/api/widgets/1", r#"[{"price": "1"}]"#),
        400,
    );
}

#[test]
fn bad_request_for_query_parameters() {
    let server = seeded();
    for path in [
        "/api?x=1",
        "/api/todos?userid=1",
        "/api/widgets/1?foo",
        "/api/todos/?_page=0",
        "/api/widgets?price_gte=1&colour=red",
    ] {
        let response = server.get(path);
        let query = path.split('?').nth(1).unwrap();
        let name = query
            .split('&')
            .next_back()
            .unwrap()
            .split('=')
            .next()
            .unwrap();
        let detail = problem(&response, 400)["detail"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(detail.contains(&format!("'{name}'")), "{path}: {detail}");
    }
    let before = snapshot(&server);
    problem(&server.json("POST", "/api/todos?dryRun=1", TODO), 400);
    problem(&server.delete("/api/todos/1?force=true"), 400);
    assert_eq!(snapshot(&server), before);
    // An empty query string names no parameter.
    assert_eq!(server.get("/api/todos?").status, 200);
}

#[test]
fn bad_request_for_ambiguous_framing() {
    let server = seeded();
    let wire = server.raw(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
    assert!(
        wire.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&wire)
    );
}

#[test]
fn not_found_for_unknown_paths_and_ids() {
    let server = seeded();
    // `/` answers (tests/api/habits.rs).
    for path in [
        "/api/things",
        "/api/todos/1/extra",
        "/todos",
        "/api//todos",
        "/API/todos",
        "/api/todos//",
    ] {
        problem(&server.get(path), 404);
    }
    for id in [
        "abc",
        "-1",
        "0",
        "1.5",
        "007",
        "01",
        "1e3",
        "%31",
        "99999999999999999999999",
    ] {
        for collection in ["todos", "widgets"] {
            problem(&server.get(&format!("/api/{collection}/{id}")), 404);
        }
    }
    for method in ["GET", "PUT", "PATCH", "DELETE"] {
        for path in ["/api/todos/2", "/api/widgets/99"] {
            let body = if method.starts_with('P') {
                br#"{"title": "x"}"#.as_slice()
            } else {
                b""
            };
            let response = server.send(method, path, &["Content-Type: application/json"], body);
            assert!(
                problem(&response, 404)["detail"]
                    .as_str()
                    .unwrap()
                    .contains("no "),
                "{method} {path}"
            );
        }
    }
    // A missing item is 404 even when the body is bad too.
    problem(&server.json("PUT", "/api/todos/5", "{"), 404);
}

#[test]
fn method_not_allowed_lists_allowed_methods() {
    let server = seeded();
    let before = snapshot(&server);
    let cases = [
        ("POST", "/api", "GET, HEAD, OPTIONS"),
        ("DELETE", "/api", "GET, HEAD, OPTIONS"),
        ("PUT", "/api/todos", "GET, HEAD, POST, OPTIONS"),
        ("PATCH", "/api/widgets", "GET, HEAD, POST, OPTIONS"),
        ("DELETE", "/api/widgets/", "GET, HEAD, POST, OPTIONS"),
        (
            "POST",
            "/api/todos/1",
            "GET, HEAD, PUT, PATCH, DELETE, OPTIONS",
        ),
        (
            "TRACE",
            "/api/widgets/1",
            "GET, HEAD, PUT, PATCH, DELETE, OPTIONS",
        ),
        ("BREW", "/api/todos", "GET, HEAD, POST, OPTIONS"),
        ("get", "/api/todos", "GET, HEAD, POST, OPTIONS"),
    ];
    for (method, path, allow) in cases {
        let response = server.send(method, path, &[], b"");
        problem(&response, 405);
        assert_eq!(response.header("Allow"), Some(allow), "{method} {path}");
    }
    assert_eq!(snapshot(&server), before);
}

#[test]
fn not_acceptable_when_accept_rules_out_json() {
    let server = seeded();
    let before = snapshot(&server);
    for accept in [
        "text/html",
        "application/xml, text/*",
        "application/json;q=0",
        "*/*;q=0",
    ] {
        let header = format!("Accept: {accept}");
        problem(&server.send("GET", "/api/todos", &[&header], b""), 406);
        problem(&server.send("GET", "/api/widgets/1", &[&header], b""), 406);
        let post = server.send(
            "POST",
            "/api/todos",
            &[&header, "Content-Type: application/json"],
            TODO.as_bytes(),
        );
        problem(&post, 406);
        problem(&server.send("DELETE", "/api/todos/1", &[&header], b""), 406);
    }
    assert_eq!(snapshot(&server), before);
}

#[test]
fn content_too_large() {
    let mut config = config();
    config.max_body_bytes = 64;
    let server = TestServer::with_config(config);
    server.create("/api/todos", TODO);
    let before = snapshot(&server);
    let big = json!({"userId": 1, "title": "x".repeat(100)}).to_string();
    let response = server.json("POST", "/api/todos", &big);
    assert!(
        problem(&response, 413)["detail"]
            .as_str()
            .unwrap()
            .contains("64")
    );
    problem(&server.json("PUT", "/api/todos/1", &big), 413);

    // Decided from Content-Length alone: the body is never sent.
    let wire = server.raw(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    let text = String::from_utf8_lossy(&wire);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(!text.contains("100 Continue"), "{text}");

    // A chunked body is counted as it is read.
    let mut chunked = b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for _ in 0..5 {
        chunked.extend_from_slice(b"14\r\n{\"title\": \"xxxxxxxx\"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert!(server.raw(&chunked).starts_with(b"HTTP/1.1 413"));

    // Exactly at the limit is fine.
    let fits = format!(r#"{{"userId": 1, "title": "{}"}}"#, "x".repeat(64 - 26));
    assert_eq!(fits.len(), 64);
    assert_eq!(server.json("POST", "/api/todos", &fits).status, 201);
    assert_eq!(server.delete("/api/todos/2").status, 200);
    assert_eq!(snapshot(&server), before);
}

#[test]
fn unsupported_media_type() {
    let server = seeded();
    let before = snapshot(&server);
    let cases: &[(&str, &str, &[&str])] = &[
        ("POST", "/api/todos", &["Content-Type: text/plain"]),
        (
            "POST",
            "/api/widgets",
            &["Content-Type: application/json; charset=iso-8859-1"],
        ),
        ("PUT", "/api/todos/1", &["Content-Type: application/xml"]),
        (
            "PUT",
            "/api/todos/1",
            &["Content-Type: application/merge-patch+json"],
        ),
        (
            "POST",
            "/api/todos",
            &["Content-Type: application/merge-patch+json"],
        ),
        (
            "PATCH",
            "/api/widgets/1",
            &["Content-Type: multipart/form-data; boundary=x"],
        ),
        ("POST", "/api/todos", &[]),
        ("PATCH", "/api/todos/1", &[]),
    ];
    for (method, path, headers) in cases {
        let response = server.send(method, path, headers, br#"{"title": "x", "userId": 1}"#);
        let body = problem(&response, 415);
        assert!(
            body["hint"].as_str().is_some(),
            "{method} {path} {headers:?}"
        );
    }
    assert_eq!(snapshot(&server), before);
}

#[test]
fn unprocessable_lists_every_offending_field() {
    let server = seeded();
    let before = snapshot(&server);
    let post = |path: &str, body: &str| error_fields(&server.json("POST", path, body));
    assert_eq!(post("/api/todos", "{}"), ["userId", "title"]);
    assert_eq!(
        post(
            "/api/todos",
            r#"{"userId": "1", "title": 5, "completed": "yes"}"#
        ),
        ["userId", "title", "completed"]
    );
    assert_eq!(
        post("/api/todos", r#"{"userId": 0, "title": "   "}"#),
        ["userId", "title"]
    );
    assert_eq!(
        post(
            "/api/todos",
            r#"{"userId": 9007199254740992, "title": "t"}"#
        ),
        ["userId"]
    );
    assert_eq!(
        post("/api/todos", r#"{"userId": 1.5, "title": "t"}"#),
        ["userId"]
    );
    assert_eq!(
        post("/api/todos", r#"{"userId": -3, "title": "t"}"#),
        ["userId"]
    );
    // A JSON number that names no integer is 422 (see
    // `whole_numbers_in_any_notation_are_integers`).
    for user_id in ["1.5", "1e-1", "0.0"] {
        let body = format!(r#"{{"userId": {user_id}, "title": "t"}}"#);
        assert_eq!(post("/api/todos", &body), ["userId"], "{user_id}");
    }
    assert_eq!(
        post(
            "/api/todos",
            r#"{"userId": null, "title": null, "completed": null}"#
        ),
        ["userId", "title", "completed"]
    );
    let long = json!({"userId": 1, "title": "x".repeat(1001)}).to_string();
    assert_eq!(post("/api/todos", &long), ["title"]);
    assert_eq!(
        post("/api/todos", r#"{"id": 5, "userId": 1, "title": "t"}"#),
        ["id"]
    );
    assert_eq!(
        post("/api/todos", r#"{"userId": 1, "title": "t", "title": "u"}"#),
        ["title"]
    );
    assert_eq!(
        post(
            "/api/todos",
            r#"{"userId": 1, "title": "t", "owner": "me"}"#
        ),
        ["owner"]
    );
    assert_eq!(
        post("/api/widgets", r#"{"price": ""}"#),
        ["price", "quality"]
    );
    let long = json!({"price": "1", "quality": "q".repeat(101)}).to_string();
    assert_eq!(post("/api/widgets", &long), ["quality"]);
    assert_eq!(
        post("/api/widgets", r#"{"price": 10, "quality": ["good"]}"#),
        ["price", "quality"]
    );
    // A well-formed document that is not an object.
    assert_eq!(post("/api/todos", "[]"), NO_FIELD);
    assert_eq!(post("/api/widgets", "null"), NO_FIELD);

    let put = |path: &str, body: &str| error_fields(&server.json("PUT", path, body));
    assert_eq!(put("/api/todos/1", "{}"), NO_FIELD);
    assert_eq!(put("/api/todos/1", r#"{"id": 1}"#), NO_FIELD);
    assert_eq!(
        put("/api/todos/1", r#"{"id": 2, "completed": true}"#),
        ["id"]
    );
    assert_eq!(put("/api/todos/1", r#"{"completed": 1}"#), ["completed"]);
    assert_eq!(put("/api/widgets/1", r#"{"price": null}"#), ["price"]);
    assert_eq!(put("/api/widgets/1", r#"{"color": "red"}"#), ["color"]);
    let patch = server.json(
        "PATCH",
        "/api/todos/1",
        r#"{"title": "ok", "completed": "true"}"#,
    );
    assert_eq!(error_fields(&patch), ["completed"]);

    let form =
        |method: &str, path: &str, body: &str| error_fields(&server.form(method, path, body));
    assert_eq!(
        form("POST", "/api/todos", "userId=abc&title="),
        ["userId", "title"]
    );
    assert_eq!(
        form("POST", "/api/todos", "userId=01&title=t&completed=yes"),
        ["userId", "completed"]
    );
    assert_eq!(
        form("POST", "/api/todos", "userId=1&title=t&title=u"),
        ["title"]
    );
    assert_eq!(form("PUT", "/api/todos/1", "id=3&completed=true"), ["id"]);
    assert_eq!(form("POST", "/api/todos", "userId=1.0&title=t"), ["userId"]);
    assert_eq!(form("PATCH", "/api/todos/1", "userId=1e3"), ["userId"]);

    let detail = server.json("POST", "/api/todos", "{}").json()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(detail, "the todo has 2 invalid fields");
    assert_eq!(snapshot(&server), before);
}

#[test]
fn whole_numbers_in_any_notation_are_integers() {
    // As JSON Schema counts them (README, "Request bodies"), read exactly.
    let server = TestServer::start();
    for (user_id, named) in [("1.0", 1), ("1e3", 1000), ("1E0", 1), ("7.00", 7)] {
        let body = format!(r#"{{"userId": {user_id}, "title": "t"}}"#);
        let created = server.create("/api/todos", &body);
        assert_eq!(created["userId"], named, "{user_id}");
    }
}

/// A small deterministic generator (SplitMix64): a failure reproduces.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A whole number from 2^20 up to 2^53 - 1, as likely in each power of two.
    fn large(&mut self) -> u64 {
        let bits = 20 + self.next() % 33;
        (1 << bits) | (self.next() & ((1 << bits) - 1))
    }
}

/// An integer field holds exactly the integer its JSON text names, or the
/// request is 422: never a neighbour. Whole numbers near 2^53 written with
/// a fraction (`N.0`) are where a float parse goes astray, so many of those
/// go by POST and by merge-patch PATCH, beside plain integers (which must
/// be accepted), the edges around 2^53, and non-integers such as `N.4`.
#[test]
fn integer_fields_hold_the_exact_integer_or_get_422() {
    const MAX: u64 = 9_007_199_254_740_991;
    let server = seeded();
    let mut random = SplitMix(0x8_0006);
    // (JSON text, the integer it names, if it names one)
    let mut cases: Vec<(String, Option<u64>)> = Vec::new();
    for n in [1 << 20, MAX - 1, MAX, MAX + 1, MAX + 2, MAX + 3] {
        cases.push((format!("{n}"), Some(n)));
        cases.push((format!("{n}.0"), Some(n)));
    }
    for _ in 0..300 {
        let n = random.large();
        cases.push((format!("{n}.0"), Some(n)));
    }
    for _ in 0..200 {
        let n = random.large();
        cases.push((format!("{n}"), Some(n)));
    }
    for _ in 0..50 {
        let n = random.large();
        cases.push((format!("{n}.4"), None));
    }
    for (i, (text, named)) in cases.iter().enumerate() {
        let response = if i % 2 == 0 {
            server.json(
                "POST",
                "/api/todos",
                &format!(r#"{{"userId": {text}, "title": "n"}}"#),
            )
        } else {
            server.send(
                "PATCH",
                "/api/todos/1",
                &["Content-Type: application/merge-patch+json"],
                format!(r#"{{"userId": {text}}}"#).as_bytes(),
            )
        };
        let in_range = named.filter(|n| (1..=MAX).contains(n));
        match response.status {
            200 | 201 => assert_eq!(
                response.json()["userId"].as_u64(),
                in_range,
                "{text} was stored as another number"
            ),
            422 => assert!(
                in_range.is_none(),
                "{text} is an integer in range, yet refused"
            ),
            status => panic!("{text}: unexpected {status}: {}", response.text()),
        }
    }
}

#[test]
fn insufficient_storage_at_max_items() {
    let mut config = config();
    config.max_items = 2;
    let server = TestServer::with_config(config);
    server.create("/api/todos", TODO);
    server.create("/api/todos", TODO);
    let full = server.json("POST", "/api/todos", TODO);
    assert!(
        problem(&full, 507)["detail"]
            .as_str()
            .unwrap()
            .contains('2')
    );
    assert_eq!(server.get("/api/todos").json().as_array().unwrap().len(), 2);
    // The limit is per collection, and a delete makes room (with a fresh id).
    server.create("/api/widgets", WIDGET);
    assert_eq!(server.delete("/api/todos/1").status, 200);
    assert_eq!(server.create("/api/todos", TODO)["id"], 3);
}
