//! List queries as json-server 0.17 clients write them, over HTTP: repeated
//! operators combine as json-server combines them, `_like` is a regular
//! expression, the array form of axios and qs is a repeated name, a
//! filter of many values costs what one costs, and a member repeated in
//! `filter` is refused. `scripts/side_by_side.py` runs the same queries
//! against json-server itself.

use std::time::{Duration, Instant};

use serde_json::json;
use widgets_todos::model::generate::Spec;

use crate::support::{self, Response, TestServer, ids, problem};

/// Eight todos whose titles a pattern can tell apart.
fn todos() -> TestServer {
    let server = TestServer::start();
    for (user, title) in [
        (1, "quis ut nam facilis"),
        (1, "Photo album"),
        (2, "tech talk"),
        (2, "Quick photo"),
        (3, "laboriosam mollitia"),
        (3, "Écrire à Émile"),
        (1, "v1.2 release"),
        (2, "(draft) plan"),
    ] {
        let body = json!({"userId": user, "title": title});
        server.create("/api/todos", &body.to_string());
    }
    server
}

fn detail(response: &Response) -> String {
    let problem = problem(response, 400);
    problem["detail"].as_str().expect("a detail").to_string()
}

#[test]
fn repeated_like_gte_and_lte_match_any_of_their_values() {
    let server = todos();
    let get = |query: &str| ids(&server.get(&format!("/api/todos?{query}")));
    assert_eq!(get("title_like=photo&title_like=tech"), [2, 3, 4]);
    assert_eq!(get("id_gte=7&id_gte=5"), [5, 6, 7, 8]);
    assert_eq!(get("id_lte=2&id_lte=3"), [1, 2, 3]);
    // Equality already took any of its values; _ne takes none of them.
    assert_eq!(get("userId=1&userId=3"), [1, 2, 5, 6, 7]);
    assert_eq!(get("userId_ne=1&userId_ne=3"), [3, 4, 8]);
    // Distinct parameters must all hold.
    assert_eq!(get("title_like=photo&title_like=tech&userId=2"), [3, 4]);
}

#[test]
fn like_is_a_regular_expression_ignoring_case() {
    let server = todos();
    let get = |query: &str| ids(&server.get(&format!("/api/todos?{query}")));
    assert_eq!(get("title_like=%5Equi"), [1, 4]);
    assert_eq!(get("title_like=^QUI"), [1, 4]);
    assert_eq!(get("title_like=album$"), [2]);
    assert_eq!(get("title_like=t.*k"), [3]);
    assert_eq!(get("title_like=^(tech|photo)"), [2, 3]);
    assert_eq!(get("title_like=%5C(draft"), [8]);
    assert_eq!(get("title_like=v1%5C.2"), [7]);
    // Letters beyond ASCII ignore case too.
    assert_eq!(get("title_like=^%C3%A9crire"), [6]);
    assert_eq!(get("title_like=%C3%A9MILE$"), [6]);
    // q stays text: the same characters are matched as written.
    assert_eq!(get("q=v1.2"), [7]);
    assert!(get("q=%5Equi").is_empty());

    for (query, says) in [
        (
            "title_like=(draft",
            "'(draft' is not a regular expression: ",
        ),
        ("title_like=a{1000}{1000}", "too large once compiled"),
        ("title_like=(?=a)", "'(?=a)' is not a regular expression"),
    ] {
        let detail = detail(&server.get(&format!("/api/todos?{query}")));
        assert!(detail.contains("'title_like'"), "{query}: {detail}");
        assert!(detail.contains(says), "{query}: {detail}");
    }
    let long = "a".repeat(101);
    let detail = detail(&server.get(&format!("/api/todos?title_like={long}")));
    assert!(detail.contains("at most 100 characters"), "{detail}");
}

#[test]
fn the_array_form_of_axios_and_qs_is_a_repeated_name() {
    let server = todos();
    let get = |query: &str| ids(&server.get(&format!("/api/todos?{query}")));
    assert_eq!(get("userId[]=1&userId[]=3"), get("userId=1&userId=3"));
    assert_eq!(get("userId%5B%5D=1&userId%5B%5D=3"), [1, 2, 5, 6, 7]);
    assert_eq!(get("userId[0]=2&userId[1]=3"), [3, 4, 5, 6, 8]);
    assert_eq!(get("title_like[]=photo&title_like[]=tech"), [2, 3, 4]);
    let detail = detail(&server.get("/api/todos?userid[]=1"));
    assert!(detail.contains("'userid[]'"), "{detail}");
}

#[test]
fn a_member_repeated_in_filter_is_400() {
    let server = todos();
    let filter = r#"{"userId":1,"userId":2}"#;
    let query: String = form_urlencoded::byte_serialize(filter.as_bytes()).collect();
    let detail = detail(&server.get(&format!("/api/todos?filter={query}")));
    assert!(
        detail.contains("'userId' is given more than once"),
        "{detail}"
    );
}

/// 100,000 todos and a filter of 30,000 ids, in both forms: each item is
/// looked up among the values, so the read and a write made meanwhile are
/// answered in a fraction of the generous bounds below (the figures:
/// scripts/listlock.py); comparing each item with each value took tens of
/// seconds.
#[test]
fn a_filter_of_30000_values_over_100000_todos_is_answered_at_once() {
    let mut config = support::config();
    config.max_items = 200_000;
    config.generate = Some(Spec {
        todos: 100_000,
        widgets: 0,
    });
    let store = widgets_todos::open_store(&config).expect("100,000 todos");
    let server = TestServer::with_store(store);
    let values: Vec<String> = (1..=30_000).map(|n| (n * 3).to_string()).collect();
    let filter = format!("{{\"id\":[{}]}}", values.join(","));
    let filter: String = form_urlencoded::byte_serialize(filter.as_bytes()).collect();
    let repeated: Vec<String> = values.iter().map(|id| format!("id={id}")).collect();
    for query in [format!("filter={filter}"), repeated.join("&")] {
        let path = format!("/api/todos?{query}&_limit=2");
        std::thread::scope(|scope| {
            let started = Instant::now();
            let read = scope.spawn(|| server.get(&path));
            let written = server.create("/api/todos", r#"{"userId":1,"title":"meanwhile"}"#);
            assert!(written["id"].as_u64().is_some());
            assert!(started.elapsed() < Duration::from_secs(10));
            let read = read.join().expect("the read");
            assert!(started.elapsed() < Duration::from_secs(20));
            assert_eq!(ids(&read), [3, 6]);
            assert_eq!(read.header("X-Total-Count"), Some("30000"));
        });
    }
}
