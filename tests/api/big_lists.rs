//! What the store keeps between writes for list reads, over HTTP: a whole
//! list longer than the store keeps (`LIST_KEPT_MAX`, lowered here to 64
//! bytes) is still served whole and right, read after read, with a stable
//! `ETag`, and follows every write; a sorted page, whose order is kept
//! between writes, follows them too.

use serde_json::json;
use widgets_todos::model::Todo;
use widgets_todos::store::Store;

use crate::support::{Response, TestServer};

/// 30 todos, kept in a store that keeps whole lists of 64 bytes at most.
fn thirty() -> TestServer {
    let server = TestServer::with_store(Store::new(1000).keeping_lists_up_to(64));
    for n in 1..=30 {
        let body = json!({"userId": n % 3 + 1, "title": format!("todo {n}")});
        server.create("/api/todos", &body.to_string());
    }
    server
}

fn titles(response: &Response) -> Vec<String> {
    assert_eq!(response.status, 200, "{}", response.text());
    let items = response.json();
    let items = items.as_array().expect("a JSON array");
    items
        .iter()
        .map(|item| item["title"].as_str().expect("a title").to_string())
        .collect()
}

#[test]
fn a_list_longer_than_the_store_keeps_is_whole_and_the_same_each_time() {
    let server = thirty();
    let first = server.get("/api/todos");
    let expected: Vec<String> = (1..=30).map(|n| format!("todo {n}")).collect();
    assert_eq!(titles(&first), expected);
    assert!(first.body.len() > 64);
    assert_eq!(first.header("X-Total-Count"), Some("30"));
    assert!(
        !server.store().keeps_list::<Todo>(),
        "longer than the bound"
    );
    let second = server.get("/api/todos");
    assert_eq!(second.body, first.body);
    let etag = first.header("ETag").expect("an ETag");
    assert_eq!(second.header("ETag"), Some(etag));
    let revalidated = server.send(
        "GET",
        "/api/todos",
        &[&format!("If-None-Match: {etag}")],
        b"",
    );
    assert_eq!(revalidated.status, 304);
    let head = server.send("HEAD", "/api/todos", &[], b"");
    let length = first.body.len().to_string();
    assert_eq!(head.header("Content-Length"), Some(length.as_str()));
}

#[test]
fn a_list_longer_than_the_store_keeps_follows_every_write() {
    let server = thirty();
    let before = server.get("/api/todos");
    let patched = server.json("PATCH", "/api/todos/7", r#"{"title": "changed"}"#);
    assert_eq!(patched.status, 200);
    let after = server.get("/api/todos");
    assert_eq!(titles(&after)[6], "changed");
    assert_ne!(after.header("ETag"), before.header("ETag"));
    assert_eq!(server.delete("/api/todos/1").status, 200);
    let after = server.get("/api/todos");
    assert_eq!(titles(&after).len(), 29);
    assert_eq!(after.header("X-Total-Count"), Some("29"));
}

#[test]
fn a_sorted_page_follows_writes() {
    let server = thirty();
    let page = |server: &TestServer| server.get("/api/todos?_sort=title&_order=desc&_limit=3");
    assert_eq!(titles(&page(&server)), ["todo 9", "todo 8", "todo 7"]);
    assert_eq!(titles(&page(&server)), ["todo 9", "todo 8", "todo 7"]);
    server.json("PATCH", "/api/todos/1", r#"{"title": "zebra"}"#);
    assert_eq!(titles(&page(&server)), ["zebra", "todo 9", "todo 8"]);
    server.create("/api/todos", r#"{"userId": 1, "title": "yak"}"#);
    assert_eq!(titles(&page(&server)), ["zebra", "yak", "todo 9"]);
    assert_eq!(server.delete("/api/todos/1").status, 200);
    // Todos 2 to 30 and "yak": 30, the last page's smallest by code point.
    let last = server.get("/api/todos?_sort=title&_order=desc&_page=10&_limit=3");
    assert_eq!(titles(&last), ["todo 12", "todo 11", "todo 10"]);
    assert_eq!(last.header("X-Total-Count"), Some("30"));
}
