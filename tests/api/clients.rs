//! [17] What the clients people point at this server show and read: the
//! `message` member of every problem (what react-admin's and Refine's
//! notifications show), the `errors` object of a 422 (what react-admin
//! puts on its form's inputs).

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
         _limit, _start, _end, _delay, _; did you mean _sort?"
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
