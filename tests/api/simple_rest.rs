//! react-admin's simple-rest dialect (`ra-data-simple-rest`): what its
//! data provider sends for each operation, and the `Content-Range` it
//! reads the total from; json-server's relations, said plainly to be none.

use serde_json::{Value, json};

use crate::support::{TestServer, ids, problem};

/// Six todos: users 1, 2, 3 in turn, the even ones completed.
fn todos() -> TestServer {
    let server = TestServer::start();
    for n in 1..=6 {
        let body = json!({"userId": (n - 1) % 3 + 1, "title": format!("todo {n}"), "completed": n % 2 == 0});
        server.create("/api/todos", &body.to_string());
    }
    server
}

/// `/api/todos?` and the parameters, percent-encoded as the provider's
/// `query-string` does.
fn url(params: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    format!("/api/todos?{}", query.finish())
}

#[test]
fn get_list_and_get_many_reference_as_the_provider_sends_them() {
    let server = todos();
    // getList: page 1 of 10, by id, no filter; with the Range header it
    // adds, which the server ignores (its unit is no unit it serves).
    let list = url(&[
        ("sort", r#"["id","ASC"]"#),
        ("range", "[0,9]"),
        ("filter", "{}"),
    ]);
    let response = server.send("GET", &list, &["Range: todos=0-9"], b"");
    assert_eq!(ids(&response), [1, 2, 3, 4, 5, 6]);
    assert_eq!(response.header("Content-Range"), Some("todos 0-5/6"));
    assert_eq!(response.header("X-Total-Count"), Some("6"));
    // HEAD: the same header fields.
    let head = server.send("HEAD", &list, &["Range: todos=0-9"], b"");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("Content-Range"), Some("todos 0-5/6"));

    // Page 2 of 2, by title descending, completed only.
    let page = url(&[
        ("sort", r#"["title","DESC"]"#),
        ("range", "[2,3]"),
        ("filter", r#"{"completed":true}"#),
    ]);
    let response = server.get(&page);
    assert_eq!(ids(&response), [2]);
    assert_eq!(response.header("Content-Range"), Some("todos 2-2/3"));

    // getManyReference: the target's id joins the filter.
    let reference = url(&[
        ("sort", r#"["id","DESC"]"#),
        ("range", "[0,24]"),
        ("filter", r#"{"completed":false,"userId":1}"#),
    ]);
    let response = server.get(&reference);
    assert_eq!(ids(&response), [1]);
    assert_eq!(response.header("Content-Range"), Some("todos 0-0/1"));

    // `q` inside the filter searches; an array means any of.
    let search = url(&[("filter", r#"{"q":"TODO 1"}"#), ("range", "[0,9]")]);
    assert_eq!(ids(&server.get(&search)), [1]);
    let any = url(&[("filter", r#"{"userId":[1,3],"completed":[true]}"#)]);
    let response = server.get(&any);
    assert_eq!(ids(&response), [4, 6]);
    assert_eq!(response.header("Content-Range"), Some("todos 0-1/2"));

    // Nothing to send: `*` and the total (RFC 9110 section 14.4).
    let beyond = url(&[("range", "[10,19]")]);
    let response = server.get(&beyond);
    assert_eq!(ids(&response), Vec::<u64>::new());
    assert_eq!(response.header("Content-Range"), Some("todos */6"));
    let empty = TestServer::start();
    let response = empty.get(&list);
    assert_eq!(response.json(), json!([]));
    assert_eq!(response.header("Content-Range"), Some("todos */0"));
    // Widgets are their own unit.
    let response = empty.get("/api/widgets?filter=%7B%7D");
    assert_eq!(response.header("Content-Range"), Some("widgets */0"));
}

#[test]
fn get_many_and_the_writes_it_sends() {
    let server = todos();
    // getMany: the ids as one filter, in any order, repeated or not.
    let many = url(&[("filter", r#"{"id":[5,1,3,1]}"#)]);
    assert_eq!(ids(&server.get(&many)), [1, 3, 5]);
    let none = url(&[("filter", r#"{"id":[]}"#)]);
    assert_eq!(ids(&server.get(&none)), Vec::<u64>::new());
    // update and updateMany: a PUT of the fields sent, the rest kept.
    let json = ["Content-Type: application/json"];
    for id in [2, 4] {
        let path = format!("/api/todos/{id}");
        let updated = server.send("PUT", &path, &json, br#"{"title": "renamed"}"#);
        assert_eq!(updated.status, 200);
        assert_eq!(updated.json()["completed"], true);
    }
    // delete and deleteMany: a DELETE with `Content-Type: text/plain` and
    // no body, whose answer's `id` the provider reads.
    for id in [2, 4] {
        let path = format!("/api/todos/{id}");
        let deleted = server.send("DELETE", &path, &["Content-Type: text/plain"], b"");
        assert_eq!(deleted.status, 200);
        assert_eq!(deleted.json()["id"], id);
        assert_eq!(deleted.json()["title"], "renamed");
    }
    assert_eq!(ids(&server.get("/api/todos")), [1, 3, 5, 6]);
}

#[test]
fn content_range_only_for_the_dialect_and_readable_by_scripts() {
    let server = todos();
    // json-server's parameters, or a Range header alone, get no
    // Content-Range: the list is the whole representation.
    for (path, headers) in [
        ("/api/todos", &[][..]),
        ("/api/todos?_start=0&_end=2", &[]),
        ("/api/todos", &["Range: todos=0-1"]),
        ("/api/todos", &["Range: bytes=0-1"]),
    ] {
        let response = server.send("GET", path, headers, b"");
        assert_eq!(response.status, 200, "{path} {headers:?}");
        assert_eq!(response.header("Content-Range"), None, "{path} {headers:?}");
    }
    assert_eq!(
        server
            .send("GET", "/api/todos", &["Range: todos=0-1"], b"")
            .json()
            .as_array()
            .map(Vec::len),
        Some(6)
    );
    // CORS lets a page's script read it, and a preflight for the Range
    // header the provider adds is allowed.
    let origin = "Origin: http://localhost:3000";
    let list = url(&[("range", "[0,1]")]);
    let response = server.send("GET", &list, &[origin], b"");
    let exposed = response.header("Access-Control-Expose-Headers").unwrap();
    assert!(
        exposed.split(", ").any(|h| h == "Content-Range"),
        "{exposed}"
    );
    let preflight = server.send(
        "OPTIONS",
        &list,
        &[
            origin,
            "Access-Control-Request-Method: GET",
            "Access-Control-Request-Headers: range",
        ],
        b"",
    );
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("Access-Control-Allow-Headers"),
        Some("range")
    );
    // A 304 stays a 304.
    let etag = response.header("ETag").unwrap().to_string();
    let line = format!("If-None-Match: {etag}");
    assert_eq!(server.send("GET", &list, &[&line], b"").status, 304);
}

#[test]
fn a_bad_value_is_400_naming_the_parameter_with_a_hint() {
    let server = todos();
    let refused = |params: &[(&str, &str)]| -> Value {
        let body = problem(&server.get(&url(params)), 400);
        assert!(
            body["hint"].as_str().is_some_and(|h| !h.is_empty()),
            "{body}"
        );
        body
    };
    let body = refused(&[("sort", r#"["titel","ASC"]"#)]);
    assert_eq!(
        body["message"],
        "bad query parameter 'sort': 'titel' is not a field; did you mean sort=[\"title\",\"ASC\"]?"
    );
    let body = refused(&[("range", "[0,-1]")]);
    assert_eq!(
        body["detail"],
        "bad query parameter 'range': '[0,-1]' is not two positions"
    );
    let body = refused(&[("filter", r#"{"userid":1}"#)]);
    assert_eq!(
        body["message"],
        "bad query parameter 'filter': 'userid' is not a filter; fields: id, userId, title, \
         completed; did you mean \"userId\"?"
    );
    let body = refused(&[("filter", r#"{"userId":"one"}"#)]);
    assert_eq!(body["hint"], "for example filter={\"userId\":3}");
    let body = refused(&[("filter", "{\"completed\":true")]);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("bad query parameter 'filter': it is not valid JSON"),
        "{body}"
    );
    refused(&[("sort", r#"["id","ASC"]"#), ("_sort", "title")]);
    refused(&[("range", "[0,9]"), ("_page", "1")]);
    refused(&[("filter", r#"{"completed":null}"#)]);
    // The other parameters stay as strict as ever.
    problem(&server.get(&url(&[("filter", "{}"), ("sortt", "x")])), 400);
}

#[test]
fn relations_are_400_saying_there_are_none() {
    let server = todos();
    let detail = |name: &str| {
        format!(
            "bad query parameter '{name}': widgets and todos have no relations, so there is \
             nothing to embed or expand"
        )
    };
    for name in ["_embed", "_expand", "embed"] {
        for path in [
            format!("/api/todos?{name}=user"),
            format!("/api/widgets?_page=1&{name}=x"),
            format!("/api/todos/1?{name}=user"),
            format!("/api?{name}=x"),
        ] {
            let body = problem(&server.get(&path), 400);
            assert_eq!(body["detail"], detail(name), "{path}");
            assert_eq!(
                body["hint"],
                format!("remove {name}: each item is served as it is stored")
            );
        }
    }
    // ra-data-simple-rest's getOne with meta.embed.
    let body = problem(&server.get("/api/todos/1?embed=%5B%22user%22%5D"), 400);
    assert_eq!(body["detail"], detail("embed"));
}
