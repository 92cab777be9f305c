//! The success paths of every route, for both collections, in JSON and form.

use serde_json::json;

use crate::support::TestServer;

#[test]
fn index_links_to_collections() {
    let server = TestServer::start();
    let response = server.get("/api");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("Content-Type"), Some("application/json"));
    assert_eq!(
        response.text(),
        r#"{"widgets":"/api/widgets","todos":"/api/todos"}"#
    );
    assert_eq!(server.get("/api/").status, 200);
}

#[test]
fn widget_lifecycle() {
    let server = TestServer::start();
    assert_eq!(server.get("/api/widgets").json(), json!([]));

    let created = server.json(
        "POST",
        "/api/widgets",
        r#"{"price": "$10", "quality": "good"}"#,
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.header("Location"), Some("/api/widgets/1"));
    assert_eq!(
        created.json(),
        json!({"id": 1, "price": "$10", "quality": "good"})
    );

    assert_eq!(server.get("/api/widgets/1").json(), created.json());

    let put = server.json("PUT", "/api/widgets/1", r#"{"price": "€12"}"#);
    assert_eq!(put.status, 200);
    assert_eq!(
        put.json(),
        json!({"id": 1, "price": "€12", "quality": "good"})
    );

    let patch = server.json("PATCH", "/api/widgets/1", r#"{"quality": "great"}"#);
    assert_eq!(
        patch.json(),
        json!({"id": 1, "price": "€12", "quality": "great"})
    );

    let deleted = server.delete("/api/widgets/1");
    assert_eq!(deleted.status, 200);
    assert_eq!(
        deleted.json(),
        json!({"id": 1, "price": "€12", "quality": "great"})
    );
    assert_eq!(server.get("/api/widgets/1").status, 404);
    assert_eq!(server.get("/api/widgets").json(), json!([]));
}

#[test]
fn todo_lifecycle() {
    let server = TestServer::start();
    let created = server.json(
        "POST",
        "/api/todos",
        r#"{"userId": 1, "title": "Buy milk"}"#,
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.header("Location"), Some("/api/todos/1"));
    assert_eq!(
        created.json(),
        json!({"id": 1, "userId": 1, "title": "Buy milk", "completed": false})
    );

    let put = server.json("PUT", "/api/todos/1", r#"{"completed": true}"#);
    assert_eq!(
        put.json(),
        json!({"id": 1, "userId": 1, "title": "Buy milk", "completed": true})
    );
    // Repeating a PUT gives the same result.
    assert_eq!(
        server
            .json("PUT", "/api/todos/1", r#"{"completed": true}"#)
            .json(),
        put.json()
    );

    let patch = server.send(
        "PATCH",
        "/api/todos/1",
        &["Content-Type: application/merge-patch+json"],
        br#"{"title": "Buy oat milk", "userId": 9007199254740991}"#,
    );
    assert_eq!(patch.status, 200, "{}", patch.text());
    assert_eq!(patch.json()["userId"], 9007199254740991u64);
    assert_eq!(patch.json()["title"], "Buy oat milk");

    assert_eq!(server.delete("/api/todos/1").status, 200);
    assert_eq!(server.delete("/api/todos/1").status, 404);
}

#[test]
fn get_modify_put_back_whole_item() {
    let server = TestServer::start();
    server.create(
        "/api/todos",
        r#"{"userId": 3, "title": "a", "completed": true}"#,
    );
    let mut item = server.get("/api/todos/1").json();
    item["title"] = json!("b");
    let put = server.json("PUT", "/api/todos/1", &item.to_string());
    assert_eq!(put.status, 200, "{}", put.text());
    assert_eq!(
        put.json(),
        json!({"id": 1, "userId": 3, "title": "b", "completed": true})
    );
}

#[test]
fn form_bodies_on_every_write() {
    let server = TestServer::start();
    let todo = server.form(
        "POST",
        "/api/todos",
        "userId=7&title=Buy+milk+%26+eggs&completed=true",
    );
    assert_eq!(todo.status, 201, "{}", todo.text());
    assert_eq!(
        todo.json(),
        json!({"id": 1, "userId": 7, "title": "Buy milk & eggs", "completed": true})
    );
    let put = server.form("PUT", "/api/todos/1", "completed=false");
    assert_eq!(put.json()["completed"], false);
    let patch = server.form("PATCH", "/api/todos/1", "userId=8&title=x");
    assert_eq!(
        patch.json(),
        json!({"id": 1, "userId": 8, "title": "x", "completed": false})
    );

    let widget = server.form("POST", "/api/widgets", "price=%2410&quality=good");
    assert_eq!(
        widget.json(),
        json!({"id": 1, "price": "$10", "quality": "good"})
    );
    let put = server.form("PUT", "/api/widgets/1", "price=11+EUR");
    assert_eq!(put.json()["price"], "11 EUR");
    let patch = server.form("PATCH", "/api/widgets/1", "quality=fine&id=1");
    assert_eq!(patch.json()["quality"], "fine");
}

#[test]
fn content_type_parameters_and_case() {
    let server = TestServer::start();
    for content_type in [
        "application/json; charset=utf-8",
        "Application/JSON;Charset=UTF-8",
    ] {
        let header = format!("Content-Type: {content_type}");
        let response = server.send(
            "POST",
            "/api/widgets",
            &[&header],
            br#"{"price": "1", "quality": "q"}"#,
        );
        assert_eq!(response.status, 201, "{content_type}: {}", response.text());
    }
}

#[test]
fn ids_ascend_per_collection_and_are_never_reused() {
    let server = TestServer::start();
    for n in 1..=3 {
        assert_eq!(
            server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#)["id"],
            n
        );
    }
    assert_eq!(
        server.create("/api/widgets", r#"{"price": "1", "quality": "q"}"#)["id"],
        1
    );
    assert_eq!(server.delete("/api/todos/3").status, 200);
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#)["id"],
        4
    );
    let ids: Vec<u64> = server
        .get("/api/todos")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 4]);
}

#[test]
fn strings_are_kept_exactly() {
    let server = TestServer::start();
    let title = "  spaced \"quoted\" ünïcødé 🚀 \n ";
    let body = json!({"userId": 1, "title": title}).to_string();
    assert_eq!(server.create("/api/todos", &body)["title"], title);
    let longest = "é".repeat(1000);
    let body = json!({"userId": 1, "title": longest}).to_string();
    assert_eq!(
        server.create("/api/todos", &body)["title"],
        longest.as_str()
    );
    let price = "x".repeat(100);
    let body = json!({"price": price, "quality": "q"}).to_string();
    assert_eq!(
        server.create("/api/widgets", &body)["price"],
        price.as_str()
    );
}

#[test]
fn head_matches_get_without_body() {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "t"}"#);
    for path in ["/api", "/api/todos", "/api/todos/1", "/api/widgets"] {
        let get = server.get(path);
        let head = server.send("HEAD", path, &[], b"");
        assert_eq!(head.status, 200, "{path}");
        assert!(head.body.is_empty());
        assert_eq!(
            head.header("Content-Length"),
            get.header("Content-Length"),
            "{path}"
        );
        assert_eq!(
            head.header("Content-Type"),
            get.header("Content-Type"),
            "{path}"
        );
        assert_eq!(head.header("Cache-Control"), Some("no-cache"));
    }
    assert_eq!(server.send("HEAD", "/api/todos/2", &[], b"").status, 404);
}

#[test]
fn options_lists_methods_of_each_path() {
    let server = TestServer::start();
    let cases = [
        ("/api", "GET, HEAD, OPTIONS"),
        ("/api/widgets", "GET, HEAD, POST, OPTIONS"),
        ("/api/todos/", "GET, HEAD, POST, OPTIONS"),
        ("/api/widgets/5", "GET, HEAD, PUT, PATCH, DELETE, OPTIONS"),
        ("/api/todos/1", "GET, HEAD, PUT, PATCH, DELETE, OPTIONS"),
    ];
    for (path, allow) in cases {
        let response = server.send("OPTIONS", path, &[], b"");
        assert_eq!(response.status, 204, "{path}");
        assert_eq!(response.header("Allow"), Some(allow), "{path}");
        assert_eq!(response.header("Content-Length"), None, "{path}");
        assert!(response.body.is_empty());
    }
}

#[test]
fn accept_variants_that_are_served() {
    let server = TestServer::start();
    for accept in [
        "application/json",
        "*/*",
        "application/*",
        "application/problem+json",
        "text/html, application/json;q=0.1",
    ] {
        let header = format!("Accept: {accept}");
        assert_eq!(
            server.send("GET", "/api/todos", &[&header], b"").status,
            200,
            "{accept}"
        );
    }
}

#[test]
fn every_response_has_standard_headers() {
    let server = TestServer::start();
    let responses = [
        server.get("/api"),
        server.json("POST", "/api/todos", r#"{"userId": 1, "title": "t"}"#),
        server.get("/api/nope"),
        server.delete("/api/todos/1"),
    ];
    for response in responses {
        assert_eq!(
            response.header("Cache-Control"),
            Some("no-cache"),
            "{response:?}"
        );
        assert_eq!(
            response.header_count("Content-Length"),
            usize::from(response.status != 204),
            "{response:?}"
        );
        if response.status < 300 && response.status != 204 {
            assert_eq!(response.header("Content-Type"), Some("application/json"));
        }
    }
}

/// List reads share one serialization between writes: every kind of write
/// must make the next list read see it, also right after a cached read,
/// and a failed write must leave the cached list as it was.
#[test]
fn list_reads_see_every_write() {
    let server = TestServer::start();
    let list = || server.get("/api/todos").json();
    assert_eq!(list(), json!([]));

    server.create("/api/todos", r#"{"userId": 1, "title": "a"}"#);
    let one = json!([{"id": 1, "userId": 1, "title": "a", "completed": false}]);
    assert_eq!(list(), one);
    assert_eq!(list(), one, "a second read serves the same list");

    let updated = server.json("PATCH", "/api/todos/1", r#"{"completed": true}"#);
    assert_eq!(updated.status, 200);
    let changed = json!([{"id": 1, "userId": 1, "title": "a", "completed": true}]);
    assert_eq!(list(), changed);

    let refused = server.json("PUT", "/api/todos/1", r#"{"completed": "maybe"}"#);
    assert_eq!(refused.status, 422);
    assert_eq!(list(), changed, "a refused update changes nothing");

    server.create("/api/todos", r#"{"userId": 2, "title": "b"}"#);
    assert_eq!(list().as_array().map(Vec::len), Some(2));

    assert_eq!(server.delete("/api/todos/1").status, 200);
    assert_eq!(
        list(),
        json!([{"id": 2, "userId": 2, "title": "b", "completed": false}])
    );
    // The other collection keeps its own list.
    assert_eq!(server.get("/api/widgets").json(), json!([]));
}
