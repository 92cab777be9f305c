//! What the clients people point at this server show and read: the
//! `message` member of every problem (what react-admin's and Refine's
//! notifications show), the `errors` object of a 422 (what react-admin
//! puts on its form's inputs), and DELETE's answer.

use serde_json::{Value, json};

use crate::support::{Response, TestServer, problem};

fn one_todo() -> TestServer {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "Buy milk"}"#);
    server
}

/// The problem's `message`, after `problem`'s checks of its shape.
fn message(response: &Response, status: u16) -> String {
    let body = problem(response, status);
    body["message"].as_str().unwrap().to_string()
}

#[test]
fn every_problem_carries_the_sentence_a_client_shows() {
    let server = one_todo();
    // 400: the detail, then how to fix it.
    assert_eq!(
        message(&server.get("/api/todos?_sortt=id"), 400),
        "unknown query parameter '_sortt'; valid parameters: id, userId, title, completed \
         (each also with _ne, _gte, _lte, or _like for text), q, _sort, _order, _page, \
         _limit, _start, _end, sort, range, filter, _delay, _; did you mean _sort?"
    );
    // 404: no hint to add.
    assert_eq!(
        message(&server.get("/api/todos/9"), 404),
        "no todo with id 9"
    );
    // 412.
    let stale = server.send(
        "PATCH",
        "/api/todos/1",
        &["Content-Type: application/json", "If-Match: \"0-0\""],
        br#"{"completed": true}"#,
    );
    assert_eq!(
        message(&stale, 412),
        "If-Match: \"0-0\" does not match the current version of todo 1; \
         GET the item again for its current ETag, then retry with that in If-Match"
    );
    // 415: what is wrong, then what to send (PATCH also takes merge-patch).
    let plain = ["Content-Type: text/plain"];
    let post = server.send("POST", "/api/todos", &plain, b"x");
    assert_eq!(
        message(&post, 415),
        "Content-Type 'text/plain' is not supported; \
         send Content-Type: application/json or application/x-www-form-urlencoded"
    );
    let patch = server.send("PATCH", "/api/todos/1", &plain, b"x");
    assert_eq!(
        message(&patch, 415),
        "Content-Type 'text/plain' is not supported; send Content-Type: \
         application/json, application/merge-patch+json or application/x-www-form-urlencoded"
    );
    let latin1 = ["Content-Type: application/json; charset=latin1"];
    let post = server.send("POST", "/api/todos", &latin1, b"{}");
    assert_eq!(
        message(&post, 415),
        "charset 'latin1' is not supported; send the body in UTF-8, with charset=utf-8 or no charset"
    );
    // 422: every field's error, in the order found.
    let invalid = server.json("POST", "/api/todos", r#"{"userId": 0}"#);
    assert_eq!(
        message(&invalid, 422),
        "the todo has 2 invalid fields: userId must be an integer from 1 to \
         9007199254740991; title is required"
    );
    // Errors of other statuses carry it too: 405, 406, 413.
    for (response, status) in [
        (server.send("PUT", "/api/todos", &[], b""), 405),
        (server.send("GET", "/api", &["Accept: text/html"], b""), 406),
    ] {
        let body = problem(&response, status);
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.len() > body["detail"].as_str().unwrap().len()),
            "{body}"
        );
    }
    // Nothing changed along the way.
    let item = server.get("/api/todos/1").json();
    assert_eq!(
        item,
        json!({"id": 1, "userId": 1, "title": "Buy milk", "completed": false})
    );
}

#[test]
fn a_422_names_each_field_as_react_admin_and_refine_read_it() {
    let server = one_todo();
    // One member per field, its error as a string; `root.serverError`,
    // react-admin's form-wide error, is the message.
    let invalid = server.json("POST", "/api/todos", r#"{"userId": "1", "completed": 1}"#);
    let body = problem(&invalid, 422);
    assert_eq!(body["detail"], "the todo has 3 invalid fields");
    let message = "the todo has 3 invalid fields: userId must be an integer from 1 to \
                   9007199254740991; title is required; completed must be true or false";
    assert_eq!(body["message"], message);
    assert_eq!(
        body["errors"],
        json!({
            "userId": "must be an integer from 1 to 9007199254740991",
            "title": "is required",
            "completed": "must be true or false",
            "root": {"serverError": message},
        })
    );
    // The same from a form body and from an update.
    let form = server.form("POST", "/api/todos", "userId=x&title=ok");
    let body = problem(&form, 422);
    assert_eq!(
        body["errors"]["userId"],
        "must be an integer from 1 to 9007199254740991"
    );
    let update = server.json("PUT", "/api/todos/1", r#"{"id": 2, "title": " "}"#);
    let body = problem(&update, 422);
    let fields: Vec<&String> = body["errors"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["id", "title", "root"], "{body}");

    // An error with no input to land on: the body as a whole, or a field
    // sent as `root` (whose name react-admin keeps for the form). Only
    // `root.serverError` and the message tell it.
    let not_object = server.json("POST", "/api/todos", "[1]");
    let body = problem(&not_object, 422);
    let message = "the request body has 1 invalid field: must be a JSON object";
    assert_eq!(body["message"], message);
    assert_eq!(body["errors"], json!({"root": {"serverError": message}}));
    let empty = server.json("PATCH", "/api/todos/1", "{}");
    let body = problem(&empty, 422);
    assert_eq!(
        body["message"],
        "the todo has 1 invalid field: an update must set at least one of: \
         userId, title, completed"
    );
    assert_eq!(body["errors"].as_object().unwrap().len(), 1, "{body}");
    let root = server.json(
        "POST",
        "/api/todos",
        r#"{"userId": 1, "title": "x", "root": 1}"#,
    );
    let body = problem(&root, 422);
    assert!(
        body["errors"]["root"]["serverError"]
            .as_str()
            .unwrap()
            .contains("root is not a field of a todo")
    );
    // Nothing was created.
    assert_eq!(
        server.get("/api/todos").json().as_array().map(Vec::len),
        Some(1)
    );
    // Other statuses have no errors member (checked by `problem` too).
    assert_eq!(
        problem(&server.get("/api/todos/9"), 404).get("errors"),
        None::<&Value>
    );
}

#[test]
fn delete_answers_the_item_deleted_whatever_accept_says() {
    let server = TestServer::start();
    let fresh = || {
        let created = server.create("/api/todos", r#"{"userId": 1, "title": "x"}"#);
        format!("/api/todos/{}", created["id"])
    };
    // What json-server 0.17 answers, so `fetch(url, {method: "DELETE"})
    // .then(r => r.json())` works: no Accept, curl's and fetch's `*/*`,
    // react-admin's `application/json`, and ra-data-simple-rest's delete,
    // which sends a Content-Type and no body.
    for headers in [
        &[][..],
        &["Accept: */*"],
        &["Accept: application/*"],
        &["Accept: application/json"],
        &["Accept: text/html, application/json;q=0.5"],
        &["Content-Type: text/plain"],
    ] {
        let path = fresh();
        let before = server.get(&path);
        let response = server.send("DELETE", &path, headers, b"");
        assert_eq!(response.status, 200, "{headers:?}: {}", response.text());
        assert_eq!(response.header("Content-Type"), Some("application/json"));
        assert_eq!(response.json(), before.json(), "{headers:?}");
        assert_eq!(response.header("Preference-Applied"), None);
        problem(&server.get(&path), 404);
    }
    // An Accept that rules JSON out is still 406, and deletes nothing.
    let path = fresh();
    problem(
        &server.send("DELETE", &path, &["Accept: text/html"], b""),
        406,
    );
    assert_eq!(server.get(&path).status, 200);
    // Errors stay problem documents; If-Match still holds.
    problem(&server.delete("/api/todos/99"), 404);
    let item = server.get(&path);
    let etag = item.header("ETag").unwrap().to_string();
    let wrong = "If-Match: \"0-0000000000000000\"";
    problem(&server.send("DELETE", &path, &[wrong], b""), 412);
    let right = format!("If-Match: {etag}");
    let deleted = server.send("DELETE", &path, &[&right], b"");
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.json(), item.json());
}

#[test]
fn prefer_return_minimal_gets_204_and_says_so() {
    let server = TestServer::start();
    let fresh = || {
        let created = server.create("/api/widgets", r#"{"price": "$1", "quality": "q"}"#);
        format!("/api/widgets/{}", created["id"])
    };
    // RFC 7240: `return=minimal`, alone or among others, in any case.
    for prefer in [
        "Prefer: return=minimal",
        "Prefer: respond-async, RETURN=Minimal; x=1",
        "Prefer: return=\"minimal\"",
    ] {
        let path = fresh();
        let response = server.send("DELETE", &path, &[prefer], b"");
        assert_eq!(response.status, 204, "{prefer}");
        assert!(response.body.is_empty());
        assert_eq!(response.header("Content-Type"), None);
        assert_eq!(response.header("Content-Length"), None);
        assert_eq!(
            response.header("Preference-Applied"),
            Some("return=minimal")
        );
        assert_eq!(server.get(&path).status, 404, "{prefer}");
    }
    // `return=representation` is what it gets anyway, and says so.
    let path = fresh();
    let response = server.send("DELETE", &path, &["Prefer: return=representation"], b"");
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["quality"], "q");
    assert_eq!(
        response.header("Preference-Applied"),
        Some("return=representation")
    );
    // Any other preference, or a malformed one, is ignored: 200, no
    // Preference-Applied (RFC 7240 section 2).
    for prefer in [
        "Prefer: handling=strict",
        "Prefer: return=nothing",
        "Prefer: wait=5",
        "Prefer: ;;==\"",
        "Prefer: return=representation-ish, return=minimal",
    ] {
        let path = fresh();
        let response = server.send("DELETE", &path, &[prefer], b"");
        assert_eq!(response.status, 200, "{prefer}");
        assert_eq!(response.header("Preference-Applied"), None, "{prefer}");
    }
    // The answer to a failed DELETE is the same with or without it.
    problem(
        &server.send(
            "DELETE",
            "/api/widgets/99",
            &["Prefer: return=minimal"],
            b"",
        ),
        404,
    );
    // Other methods do not read it.
    let created = server.send(
        "POST",
        "/api/widgets",
        &["Content-Type: application/json", "Prefer: return=minimal"],
        br#"{"price": "$2", "quality": "q"}"#,
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.json()["price"], "$2");
    assert_eq!(created.header("Preference-Applied"), None);
}
