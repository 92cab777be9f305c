//! json-server habits and the first five minutes: `GET /`, collections
//! asked for outside `/api`, `_order` in any case, the cache-buster `_`,
//! hints that say how to fix a request, and what react-admin's json-server
//! data provider (`ra-data-json-server` 5.x) sends and reads.

use serde_json::json;
use widgets_todos::config::{Config, Secret};

use crate::support::{Response, TestServer, config, error_fields, ids, problem};

/// What Firefox sends when you type a URL.
const BROWSER: &str =
    "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";

/// Six todos: users 1 and 2 in turn, the even ones completed.
fn todos() -> TestServer {
    let server = TestServer::start();
    for n in 1..=6 {
        let body = json!({"userId": (n - 1) % 2 + 1, "title": format!("todo {n}"), "completed": n % 2 == 0});
        server.create("/api/todos", &body.to_string());
    }
    server
}

fn hint(response: &Response, status: u16) -> String {
    let body = problem(response, status);
    body["hint"].as_str().unwrap_or("").to_string()
}

#[test]
fn root_lists_what_is_served_as_json() {
    let server = TestServer::start();
    for path in ["/", "/?_=1700000000"] {
        let response = server.get(path);
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(response.header("Content-Type"), Some("application/json"));
        assert_eq!(response.header("Vary"), Some("Accept, Origin"));
        assert_eq!(
            response.json(),
            json!({"api": "/api", "widgets": "/api/widgets", "todos": "/api/todos",
                   "openapi": "/api/openapi.json", "health": "/healthz"})
        );
    }
    for accept in [
        "Accept: */*",
        "Accept: application/json",
        "Accept: application/*",
    ] {
        let response = server.send("GET", "/", &[accept], b"");
        assert_eq!(response.header("Content-Type"), Some("application/json"));
    }
    // HEAD: the same header fields, no body.
    let get = server.get("/");
    let head = server.send("HEAD", "/", &[], b"");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(
        head.header("Content-Length"),
        Some(get.body.len().to_string().as_str())
    );
    // `/api` is as it was.
    assert_eq!(
        server.get("/api").text(),
        r#"{"widgets":"/api/widgets","todos":"/api/todos"}"#
    );
}

#[test]
fn root_is_a_page_of_links_for_a_browser() {
    let server = TestServer::start();
    for accept in [BROWSER, "Accept: text/html"] {
        let response = server.send("GET", "/", &[accept], b"");
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("Content-Type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(response.header("Vary"), Some("Accept, Origin"));
        let page = response.text();
        for link in [
            "/api/widgets",
            "/api/todos",
            "/api/openapi.json",
            "/healthz",
        ] {
            assert!(page.contains(&format!("<a href=\"{link}\">")), "{page}");
        }
        let head = server.send("HEAD", "/", &[accept], b"");
        assert_eq!(
            head.header("Content-Length"),
            Some(page.len().to_string().as_str())
        );
    }
    // Neither JSON nor HTML: 406, as a problem document.
    problem(&server.send("GET", "/", &["Accept: text/plain"], b""), 406);
}

#[test]
fn root_takes_get_head_and_options_only() {
    let server = TestServer::start();
    for method in ["POST", "PUT", "PATCH", "DELETE"] {
        let response = server.send(method, "/", &["Content-Type: application/json"], b"{}");
        problem(&response, 405);
        assert_eq!(response.header("Allow"), Some("GET, HEAD, OPTIONS"));
    }
    let options = server.send("OPTIONS", "/", &[], b"");
    assert_eq!(options.status, 204);
    assert_eq!(options.header("Allow"), Some("GET, HEAD, OPTIONS"));
    // Like any path without a query language, other parameters are 400.
    problem(&server.get("/?page=2"), 400);
}

#[test]
fn root_needs_no_token() {
    let server = TestServer::with_config(Config {
        auth_token: Some(Secret::new("let-me-in")),
        ..config()
    });
    assert_eq!(server.get("/").status, 200);
    problem(&server.get("/api"), 401);
}

#[test]
fn collections_outside_api_get_a_404_naming_the_path_meant() {
    let server = todos();
    for (path, meant) in [
        ("/todos", "/api/todos"),
        ("/todos/", "/api/todos"),
        ("/todos/1", "/api/todos/1"),
        ("/todos/1/", "/api/todos/1"),
        ("/widgets", "/api/widgets"),
        ("/widgets/7", "/api/widgets/7"),
        ("/todos?_sort=id", "/api/todos?_sort=id"),
    ] {
        let response = server.get(path);
        assert!(
            hint(&response, 404).ends_with(&format!("try {meant}")),
            "{path}: {}",
            response.text()
        );
        // Whatever the method: the path is what is wrong.
        let post = server.json("POST", path, r#"{"userId": 1, "title": "x"}"#);
        assert!(hint(&post, 404).contains(meant), "POST {path}");
    }
    // Another collection, as json-server would serve it: the hint names
    // the two there are (`json_server_cli.rs` has json-server's own).
    for path in ["/things", "/api/things", "/todo", "/TODOS"] {
        let body = problem(&server.get(path), 404);
        let hint = body["hint"].as_str().unwrap_or("");
        assert!(
            hint.contains("/api/todos and /api/widgets"),
            "{path}: {body}"
        );
    }
    // Deeper than an item: 404 without a hint.
    let body = problem(&server.get("/todos/1/extra"), 404);
    assert!(body.get("hint").is_none(), "{body}");
}

#[test]
fn order_is_read_in_any_case() {
    let server = todos();
    let get = |query: &str| ids(&server.get(&format!("/api/todos?{query}")));
    let descending = get("_sort=id&_order=desc");
    assert_eq!(descending, [6, 5, 4, 3, 2, 1]);
    for order in ["DESC", "Desc", "dEsC"] {
        assert_eq!(get(&format!("_sort=id&_order={order}")), descending);
    }
    for order in ["asc", "ASC", "Asc"] {
        assert_eq!(get(&format!("_sort=id&_order={order}")), [1, 2, 3, 4, 5, 6]);
    }
    // json-server's comma lists too.
    assert_eq!(
        get("_sort=completed,userId&_order=DESC,Asc"),
        get("_sort=completed,userId&_order=desc,asc")
    );
    assert_eq!(
        get("_sort=completed,userId&_order=DESC,Asc"),
        [2, 4, 6, 1, 3, 5]
    );
    // Still only the two orders.
    problem(&server.get("/api/todos?_sort=id&_order=DOWN"), 400);
}

#[test]
fn the_cache_buster_is_ignored_everywhere() {
    let server = todos();
    let id = server.create("/api/widgets", r#"{"price": "$1", "quality": "ok"}"#)["id"].clone();
    let widget = format!("/api/widgets/{id}");
    for query in ["_=1700000000", "_=", "_", "_=x&_=y", "_=1&_delay=0"] {
        for path in [
            "/",
            "/api",
            "/healthz",
            "/api/openapi.json",
            "/api/todos",
            "/api/todos/1",
        ] {
            let response = server.get(&format!("{path}?{query}"));
            assert_eq!(response.status, 200, "{path}?{query}: {}", response.text());
        }
        let listed = server.get(&format!("/api/todos?userId=2&{query}"));
        assert_eq!(ids(&listed), [2, 4, 6]);
        let patched = server.json(
            "PATCH",
            &format!("{widget}?{query}"),
            r#"{"quality": "good"}"#,
        );
        assert_eq!(patched.status, 200, "{}", patched.text());
        let options = server.send("OPTIONS", &format!("/api/todos?{query}"), &[], b"");
        assert_eq!(options.status, 204);
    }
    // The cache-buster never reaches the pagination links.
    let paged = server.get("/api/todos?_page=1&_limit=2&_=1700000000");
    let link = paged.header("Link").expect("a Link header");
    assert!(!link.contains("_="), "{link}");
    let created = server.json("POST", "/api/todos?_=1", r#"{"userId": 1, "title": "x"}"#);
    assert_eq!(created.status, 201);
    assert_eq!(server.delete(&format!("{widget}?_=1")).status, 200);
}

#[test]
fn resetting_a_collection_hints_at_allow_reset() {
    let server = todos();
    for collection in ["todos", "widgets"] {
        let response = server.delete(&format!("/api/{collection}"));
        assert!(
            hint(&response, 405).contains("--allow-reset"),
            "{collection}"
        );
        assert_eq!(response.header("Allow"), Some("GET, HEAD, POST, OPTIONS"));
    }
    assert_eq!(ids(&server.get("/api/todos")).len(), 6);
    // Other methods the collection does not take keep the usual hint.
    let put = server.json("PUT", "/api/todos", "{}");
    assert!(hint(&put, 405).contains("Allow"));
}

#[test]
fn an_empty_body_hints_at_a_valid_item_of_its_collection() {
    let server = todos();
    for (collection, fields) in [
        ("widgets", ["price", "quality"]),
        ("todos", ["userId", "title"]),
    ] {
        let path = format!("/api/{collection}");
        let response = server.json("POST", &path, "");
        let hint = hint(&response, 400);
        for field in fields {
            assert!(hint.contains(&format!("\"{field}\"")), "{hint}");
        }
        // The example is a body this collection takes.
        let (_, example) = hint.split_once("e.g. ").expect("an example");
        assert_eq!(server.json("POST", &path, example).status, 201, "{example}");
        assert_eq!(
            server.json("PATCH", &format!("{path}/1"), example).status,
            200
        );
    }
}

#[test]
fn a_form_labelled_json_hints_at_the_form_type() {
    let server = todos();
    for body in ["title=x&userId=1", "title=Buy+milk", "completed=true\n"] {
        let response = server.json("POST", "/api/todos", body);
        let hint = hint(&response, 400);
        assert!(
            hint.contains("application/x-www-form-urlencoded"),
            "{body}: {hint}"
        );
    }
    // The same body sent as a form is what was meant.
    assert_eq!(
        server.form("POST", "/api/todos", "title=x&userId=1").status,
        201
    );
    // JSON that is merely broken gets no such hint.
    let broken = server.json("POST", "/api/todos", r#"{"title": "x""#);
    assert!(!hint(&broken, 400).contains("form"));
}

#[test]
fn a_misspelt_field_gets_did_you_mean() {
    let server = todos();
    let message = |response: &Response, field: &str| -> String {
        let body = problem(response, 422);
        body["errors"][field].to_string()
    };
    let cases = [
        (
            "/api/todos",
            r#"{"userid": 1, "title": "x"}"#,
            "userid",
            "userId",
        ),
        (
            "/api/todos",
            r#"{"userId": 1, "titel": "x"}"#,
            "titel",
            "title",
        ),
        (
            "/api/todos",
            r#"{"userId": 1, "title": "x", "complete": true}"#,
            "complete",
            "completed",
        ),
        (
            "/api/widgets",
            r#"{"Price": "$1", "quality": "ok"}"#,
            "Price",
            "price",
        ),
        (
            "/api/widgets",
            r#"{"price": "$1", "qualty": "ok"}"#,
            "qualty",
            "quality",
        ),
    ];
    for (path, body, field, meant) in cases {
        let response = server.json("POST", path, body);
        let message = message(&response, field);
        assert!(
            message.contains(&format!("did you mean {meant}?")),
            "{body}: {message}"
        );
    }
    // The typo stays an error: nothing was created, in a form body too.
    let form = server.form("POST", "/api/todos", "userid=1&title=x");
    assert!(message(&form, "userid").contains("did you mean userId?"));
    let patch = server.json("PATCH", "/api/todos/1", r#"{"titel": "y"}"#);
    assert!(message(&patch, "titel").contains("did you mean title?"));
    assert_eq!(ids(&server.get("/api/todos")).len(), 6);
    // Nothing close: no guess.
    let far = server.json(
        "POST",
        "/api/todos",
        r#"{"userId": 1, "title": "x", "colour": 1}"#,
    );
    assert!(!message(&far, "colour").contains("did you mean"));
    assert_eq!(error_fields(&far), ["colour"]);
}

#[test]
fn a_misspelt_query_parameter_gets_did_you_mean() {
    let server = todos();
    for (query, meant) in [
        ("_sortt=id", "did you mean _sort?"),
        ("userid=1", "did you mean userId?"),
        ("UserId_gte=1", "did you mean userId_gte?"),
        ("_limt=2", "did you mean _limit?"),
        ("titel_like=x", "did you mean title_like?"),
        ("_sort=userid", "did you mean _sort=userId?"),
    ] {
        let response = server.get(&format!("/api/todos?{query}"));
        assert_eq!(hint(&response, 400), meant, "{query}");
    }
    let far = server.get("/api/todos?colour=red");
    assert!(!hint(&far, 400).contains("did you mean"));
}

/// `ra-data-json-server` 5.x with its `fetchJson`, pointed at `/api`: every
/// request it makes, with the header fields it sends and the parts of the
/// response it reads.
#[test]
fn react_admin_data_provider_requests() {
    let server = todos();
    let ra = ["Accept: application/json", "Origin: http://localhost:5173"];
    let get = |path: &str| server.send("GET", path, &ra, b"");
    // getList and getManyReference: `_sort`, `_order` in capitals,
    // `_start`/`_end`, filters and `q`; the total from X-Total-Count,
    // which CORS must let the script read.
    let list = get("/api/todos?_end=4&_order=DESC&_sort=id&_start=0");
    assert_eq!(ids(&list), [6, 5, 4, 3]);
    assert_eq!(list.header("X-Total-Count"), Some("6"));
    let exposed = list.header("Access-Control-Expose-Headers").unwrap();
    assert!(exposed.contains("X-Total-Count"), "{exposed}");
    let reference = get("/api/todos?_end=10&_order=ASC&_sort=title&_start=0&userId=2");
    assert_eq!(ids(&reference), [2, 4, 6]);
    let search = get("/api/todos?_end=10&_order=ASC&_sort=id&_start=0&q=TODO%203");
    assert_eq!(ids(&search), [3]);
    // getMany: `id` repeated.
    assert_eq!(ids(&get("/api/todos?id=1&id=3&id=5")), [1, 3, 5]);
    // update: PUT of the whole record, id included.
    let json = ["Accept: application/json", "Content-Type: application/json"];
    let record = r#"{"id": 2, "userId": 2, "title": "renamed", "completed": true}"#;
    let updated = server.send("PUT", "/api/todos/2", &json, record.as_bytes());
    assert_eq!(updated.json()["title"], "renamed");
}
