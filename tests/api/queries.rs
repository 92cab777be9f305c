//! List queries (filters, `q`, sort, slices, `X-Total-Count`, `Link`) and
//! conditional requests (`ETag`, `If-None-Match`, `If-Match`), over HTTP.
//! The parsing rules themselves are unit-tested in `src/model/query_tests.rs`.

use std::sync::{Arc, Barrier};

use serde_json::{Value, json};

use crate::support::{Response, TestServer, ids, problem};

/// Twelve todos: user 1 to 3 in turn, every third completed, titles that
/// mention milk now and then.
fn todos() -> TestServer {
    let server = TestServer::start();
    for n in 1..=12 {
        let title = match n % 4 {
            0 => format!("Buy MILK {n}"),
            1 => format!("walk the dog {n}"),
            2 => format!("milkshake {n}"),
            _ => format!("write letter {n}"),
        };
        let body = json!({"userId": (n - 1) % 3 + 1, "title": title, "completed": n % 3 == 0});
        server.create("/api/todos", &body.to_string());
    }
    server
}

fn total(response: &Response) -> usize {
    response
        .header("X-Total-Count")
        .and_then(|n| n.parse().ok())
        .expect("an X-Total-Count header")
}

#[test]
fn filters_by_field_with_operators_and_q() {
    let server = todos();
    let get = |q: &str| server.get(&format!("/api/todos?{q}"));
    assert_eq!(ids(&get("userId=1")), [1, 4, 7, 10]);
    assert!(ids(&get("userId=1&completed=true")).is_empty());
    assert_eq!(ids(&get("userId=3&completed=true")), [3, 6, 9, 12]);
    assert_eq!(ids(&get("id=2&id=5&id=99")), [2, 5]);
    assert_eq!(ids(&get("id_gte=10")), [10, 11, 12]);
    assert_eq!(ids(&get("id_lte=2")), [1, 2]);
    assert_eq!(ids(&get("userId_ne=1&userId_ne=2")), [3, 6, 9, 12]);
    assert_eq!(ids(&get("title_like=milk")), [2, 4, 6, 8, 10, 12]);
    assert_eq!(ids(&get("title_like=milk&completed=false")), [2, 4, 8, 10]);
    assert_eq!(ids(&get("q=DOG")), [1, 5, 9]);
    assert_eq!(ids(&get("title=milkshake%206")), [6]);
    assert_eq!(ids(&get("title=milkshake+6")), [6]);
    // Widgets filter by their own fields.
    server.create("/api/widgets", r#"{"price": "$10", "quality": "good"}"#);
    server.create(
        "/api/widgets",
        r#"{"price": "$12", "quality": "Good enough"}"#,
    );
    assert_eq!(
        ids(&server.get("/api/widgets?quality_like=GOOD&price_ne=%2410")),
        [2]
    );
    assert_eq!(ids(&server.get("/api/widgets?q=%2412")), [2]);
}

#[test]
fn sorts_with_ties_by_id() {
    let server = todos();
    let get = |q: &str| ids(&server.get(&format!("/api/todos?{q}")));
    assert_eq!(get("_sort=userId&id_lte=6"), [1, 4, 2, 5, 3, 6]);
    assert_eq!(get("_sort=userId&_order=desc&id_lte=6"), [3, 6, 2, 5, 1, 4]);
    assert_eq!(
        get("_sort=completed,userId&_order=desc,asc&id_lte=6"),
        [3, 6, 1, 4, 2, 5]
    );
    assert_eq!(get("_sort=title&userId=2"), [8, 2, 5, 11]);
}

#[test]
fn slices_pages_and_their_headers() {
    let server = todos();
    let page = server.get("/api/todos?_page=2&_limit=5");
    assert_eq!(ids(&page), [6, 7, 8, 9, 10]);
    assert_eq!(total(&page), 12);
    assert_eq!(
        page.header("Link"),
        Some(
            "</api/todos?_page=1&_limit=5>; rel=\"first\", \
             </api/todos?_page=1&_limit=5>; rel=\"prev\", \
             </api/todos?_page=3&_limit=5>; rel=\"next\", \
             </api/todos?_page=3&_limit=5>; rel=\"last\""
        )
    );
    // `_limit` defaults to 10 with `_page`; filters stay in the links.
    let first = server.get("/api/todos?userId=2&_page=1");
    assert_eq!(ids(&first), [2, 5, 8, 11]);
    assert_eq!(total(&first), 4);
    assert_eq!(
        first.header("Link"),
        Some(
            "</api/todos?userId=2&_page=1&_limit=10>; rel=\"first\", \
             </api/todos?userId=2&_page=1&_limit=10>; rel=\"last\""
        )
    );
    assert!(ids(&server.get("/api/todos?_page=9&_limit=5")).is_empty());

    let range = server.get("/api/todos?_start=2&_end=5");
    assert_eq!(ids(&range), [3, 4, 5]);
    assert_eq!(total(&range), 12);
    assert_eq!(range.header("Link"), None);
    assert_eq!(ids(&server.get("/api/todos?_start=10&_limit=5")), [11, 12]);
    assert_eq!(ids(&server.get("/api/todos?_limit=2")), [1, 2]);
    // Filter, then sort, then slice; the total counts every match.
    let combined = server.get("/api/todos?title_like=milk&_sort=id&_order=desc&_limit=2");
    assert_eq!(ids(&combined), [12, 10]);
    assert_eq!(total(&combined), 6);
    // Counting without the items.
    let count = server.get("/api/todos?completed=true&_limit=0");
    assert_eq!((ids(&count), total(&count)), (vec![], 4));
    // HEAD carries the same headers.
    let head = server.send("HEAD", "/api/todos?_page=1&_limit=5", &[], b"");
    assert_eq!(head.status, 200);
    assert_eq!(total(&head), 12);
    assert!(head.header("Link").is_some());
    // Every list carries the count, the plain one too.
    assert_eq!(total(&server.get("/api/todos")), 12);
    assert_eq!(total(&server.get("/api/widgets")), 0);
}

#[test]
fn bad_queries_are_400_naming_the_parameter() {
    let server = todos();
    let before = server.get("/api/todos").text();
    for (query, name) in [
        ("userid=1", "userid"),
        ("userId=01", "userId"),
        ("userId=x", "userId"),
        ("userId=1.0", "userId"),
        ("id_gte=1e3", "id_gte"),
        ("completed=yes", "completed"),
        ("completed_gte=true", "completed_gte"),
        ("userId_like=1", "userId_like"),
        ("title_regex=a", "title_regex"),
        ("_page=0", "_page"),
        ("_page=1&_limit=0", "_limit"),
        ("_limit=-1", "_limit"),
        ("_limit=ten", "_limit"),
        ("_start=5&_end=2", "_end"),
        ("_sort=owner", "_sort"),
        ("_sort=id&_order=up", "_order"),
        ("_order=desc", "_order"),
        ("q=a&q=b", "q"),
        ("_embed=user", "_embed"),
    ] {
        let response = server.get(&format!("/api/todos?{query}"));
        let detail = problem(&response, 400)["detail"]
            .as_str()
            .expect("a detail")
            .to_string();
        assert!(detail.contains(&format!("'{name}'")), "{query}: {detail}");
    }
    let unknown = server.get("/api/todos?titel=x");
    let detail = problem(&unknown, 400)["detail"].as_str().map(String::from);
    let detail = detail.expect("a detail");
    for valid in [
        "userId",
        "title",
        "completed",
        "q",
        "_sort",
        "_page",
        "_limit",
    ] {
        assert!(detail.contains(valid), "{detail} lacks {valid}");
    }
    // Still only collections take a query, and only to read.
    problem(&server.get("/api/todos/1?userId=1"), 400);
    problem(
        &server.json(
            "POST",
            "/api/todos?userId=1",
            r#"{"userId": 1, "title": "t"}"#,
        ),
        400,
    );
    assert_eq!(server.get("/api/todos").text(), before);
    // A preflight carries the query of the request it asks about, whatever
    // it is; a plain OPTIONS checks the query as the path's GET would.
    let preflight = "Access-Control-Request-Method: GET";
    for path in [
        "/api/todos?_page=2",
        "/api/todos?bogus=1",
        "/api/todos/1?x=1",
        "/api?x=1",
    ] {
        assert_eq!(
            server.send("OPTIONS", path, &[preflight], b"").status,
            204,
            "{path}"
        );
    }
    assert_eq!(
        server
            .send("OPTIONS", "/api/todos?_page=2", &[], b"")
            .status,
        204
    );
    for path in ["/api/todos?bogus=1", "/api/todos/1?x=1", "/api?x=1"] {
        problem(&server.send("OPTIONS", path, &[], b""), 400);
    }
}

/// Percent-decoding of the query is strict, as for form bodies: a `%`
/// without two hex digits, or escapes that decode to bytes that are not
/// UTF-8, are 400 naming the parameter, never text with U+FFFD in it or a
/// literal `%` matched against the items. Every path that reads a query.
#[test]
fn malformed_percent_escapes_are_400_naming_the_parameter() {
    let server = todos();
    server.create("/api/todos", r#"{"userId": 1, "title": "100% \ufffd"}"#);
    let before = server.get("/api/todos").text();
    for (path, name) in [
        ("/api/todos?title_like=%ff", "title_like"),
        ("/api/todos?title=%zz", "title"),
        ("/api/todos?title=%", "title"),
        ("/api/todos?title_like=%25%", "title_like"),
        ("/api/todos?q=%f", "q"),
        ("/api/todos?q=caf%e9", "q"),
        ("/api/todos?q=%+1", "q"),
        ("/api/todos?userId=1&title_like=%C3", "title_like"),
        ("/api/todos?ti%zztle=x", "ti%zztle"),
        ("/api/todos?%ff=1", "%ff"),
        ("/api/widgets?_sort=%zz", "_sort"),
        ("/api/todos?_delay=%ff", "_delay"),
        ("/api/todos/1?_delay=%", "_delay"),
        ("/api?_delay=1%ff", "_delay"),
        ("/api/todos/1?x=%zz", "x"),
        ("/healthz?y=%", "y"),
    ] {
        let response = server.get(path);
        let detail = problem(&response, 400)["detail"]
            .as_str()
            .expect("a detail")
            .to_string();
        assert!(detail.contains(&format!("'{name}'")), "{path}: {detail}");
    }
    // A plain OPTIONS reads the query as GET does; writes are refused too.
    problem(
        &server.send("OPTIONS", "/api/todos?title_like=%ff", &[], b""),
        400,
    );
    problem(
        &server.json(
            "POST",
            "/api/todos?_delay=%zz",
            r#"{"userId": 1, "title": "t"}"#,
        ),
        400,
    );
    assert_eq!(server.get("/api/todos").text(), before);
    // Well-formed escapes still decode, UTF-8 and `+` included.
    assert_eq!(ids(&server.get("/api/todos?title_like=100%25")), [13]);
    assert_eq!(ids(&server.get("/api/todos?title_like=%EF%BF%BD")), [13]);
    assert_eq!(ids(&server.get("/api/todos?title=milkshake+6")), [6]);
    assert_eq!(ids(&server.get("/api/todos?%74itle=milkshake%206")), [6]);
}

#[test]
fn etags_and_if_none_match() {
    let server = todos();
    let item = server.get("/api/todos/1");
    assert_eq!(item.header("Cache-Control"), Some("no-cache"));
    let tag = item.header("ETag").expect("an ETag").to_string();
    assert!(tag.starts_with('"') && tag.ends_with('"'), "strong: {tag}");
    assert_eq!(
        server.get("/api/todos/1").header("ETag"),
        Some(tag.as_str())
    );
    assert_ne!(
        server.get("/api/todos/2").header("ETag"),
        Some(tag.as_str())
    );

    for header in [
        tag.clone(),
        format!("W/{tag}"),
        format!("\"x\", {tag}"),
        "*".into(),
    ] {
        let line = format!("If-None-Match: {header}");
        let unchanged = server.send("GET", "/api/todos/1", &[&line], b"");
        assert_eq!(unchanged.status, 304, "{header}");
        assert!(unchanged.body.is_empty());
        assert_eq!(unchanged.header("ETag"), Some(tag.as_str()));
        assert_eq!(unchanged.header("Content-Length"), None);
        let head = server.send("HEAD", "/api/todos/1", &[&line], b"");
        assert_eq!(head.status, 304, "{header}");
    }
    let other = server.send("GET", "/api/todos/1", &["If-None-Match: \"nope\""], b"");
    assert_eq!(other.status, 200);

    // The tag changes exactly when the representation does.
    let same = server.json("PATCH", "/api/todos/1", r#"{"userId": 1}"#);
    assert_eq!(same.header("ETag"), Some(tag.as_str()));
    let changed = server.json("PATCH", "/api/todos/1", r#"{"title": "new"}"#);
    let new_tag = changed.header("ETag").expect("an ETag").to_string();
    assert_ne!(new_tag, tag);
    let line = format!("If-None-Match: {tag}");
    assert_eq!(
        server.send("GET", "/api/todos/1", &[&line], b"").status,
        200
    );

    // Lists: the plain list, and a query's own result.
    let list = server.get("/api/todos");
    let list_tag = list.header("ETag").expect("a list ETag").to_string();
    let line = format!("If-None-Match: {list_tag}");
    assert_eq!(server.send("GET", "/api/todos", &[&line], b"").status, 304);
    let page = server.get("/api/todos?_page=1&_limit=3");
    let page_tag = page.header("ETag").expect("a page ETag").to_string();
    assert_ne!(page_tag, list_tag);
    let line = format!("If-None-Match: {page_tag}");
    assert_eq!(
        server
            .send("GET", "/api/todos?_page=1&_limit=3", &[&line], b"")
            .status,
        304
    );
    server.create("/api/todos", r#"{"userId": 1, "title": "more"}"#);
    let line = format!("If-None-Match: {list_tag}");
    assert_eq!(server.send("GET", "/api/todos", &[&line], b"").status, 200);
    // A created item comes with its tag, the same a GET gives.
    let created = server.json("POST", "/api/todos", r#"{"userId": 2, "title": "t"}"#);
    let id = created.json()["id"].as_u64().expect("an id");
    assert_eq!(
        created.header("ETag"),
        server.get(&format!("/api/todos/{id}")).header("ETag")
    );
}

#[test]
fn if_match_guards_updates_and_deletes() {
    let server = todos();
    let tag = server
        .get("/api/todos/1")
        .header("ETag")
        .expect("an ETag")
        .to_string();
    let if_match = format!("If-Match: {tag}");
    let json = "Content-Type: application/json";

    let stale = server.send(
        "PUT",
        "/api/todos/1",
        &["If-Match: \"old\"", json],
        br#"{"title": "x"}"#,
    );
    problem(&stale, 412);
    let weak = format!("If-Match: W/{tag}");
    problem(
        &server.send("PUT", "/api/todos/1", &[&weak, json], br#"{"title": "x"}"#),
        412,
    );
    // The body's own errors come first: a stale tag with a bad body is 400.
    problem(
        &server.send("PATCH", "/api/todos/1", &["If-Match: \"old\"", json], b"{"),
        400,
    );
    assert_eq!(
        server.get("/api/todos/1").header("ETag"),
        Some(tag.as_str())
    );

    let updated = server.send(
        "PUT",
        "/api/todos/1",
        &[&if_match, json],
        br#"{"title": "x"}"#,
    );
    assert_eq!(updated.status, 200);
    // The same tag again is now stale.
    problem(
        &server.send(
            "PATCH",
            "/api/todos/1",
            &[&if_match, json],
            br#"{"title": "y"}"#,
        ),
        412,
    );
    problem(
        &server.send("DELETE", "/api/todos/1", &[&if_match], b""),
        412,
    );
    assert_eq!(server.get("/api/todos/1").json()["title"], "x");

    // `*` matches any current version; a missing item is 404, with or
    // without If-Match (RFC 9110 section 13.2.1: a failure found before the
    // content is processed wins over preconditions).
    let star = "If-Match: *";
    assert_eq!(
        server
            .send("PATCH", "/api/todos/2", &[star, json], br#"{"title": "z"}"#)
            .status,
        200
    );
    problem(
        &server.send(
            "PATCH",
            "/api/todos/99",
            &[star, json],
            br#"{"title": "z"}"#,
        ),
        404,
    );
    problem(&server.send("DELETE", "/api/todos/99", &[star], b""), 404);
    problem(&server.delete("/api/todos/99"), 404);

    let current = server.get("/api/todos/3").header("ETag").map(String::from);
    let line = format!("If-Match: \"a\", {}", current.expect("an ETag"));
    assert_eq!(
        server.send("DELETE", "/api/todos/3", &[&line], b"").status,
        200
    );
    assert_eq!(server.get("/api/todos/3").status, 404);
}

/// `If-Match` with the tag a POST answered with, before any GET: the
/// server holds no JSON for the item yet and works the tag out afresh; it
/// must be the same tag.
#[test]
fn if_match_takes_the_tag_a_post_answered_with() {
    let server = todos();
    let json = "Content-Type: application/json";
    let created = server.send(
        "POST",
        "/api/todos",
        &[json],
        br#"{"userId": 1, "title": "fresh"}"#,
    );
    assert_eq!(created.status, 201);
    let tag = created.header("ETag").expect("an ETag").to_string();
    let location = created.header("Location").expect("a Location").to_string();
    let if_match = format!("If-Match: {tag}");

    let updated = server.send("PATCH", &location, &[&if_match, json], br#"{"title": "x"}"#);
    assert_eq!(updated.status, 200);
    // Now stale, whether the server keeps the new version's JSON or not.
    problem(&server.send("DELETE", &location, &[&if_match], b""), 412);
    let current = format!("If-Match: {}", updated.header("ETag").expect("an ETag"));
    assert_eq!(
        server.send("DELETE", &location, &[&current], b"").status,
        200
    );
}

/// Two clients read the same version and both try to overwrite it: exactly
/// one may win, however the requests interleave.
#[test]
fn if_match_race_has_exactly_one_winner() {
    let server = Arc::new(todos());
    for round in 0..20 {
        let tag = server
            .get("/api/todos/4")
            .header("ETag")
            .expect("an ETag")
            .to_string();
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = (0..2)
            .map(|n| {
                let (server, barrier, tag) =
                    (Arc::clone(&server), Arc::clone(&barrier), tag.clone());
                std::thread::spawn(move || {
                    let line = format!("If-Match: {tag}");
                    let body = format!(r#"{{"title": "round {round} writer {n}"}}"#);
                    barrier.wait();
                    server
                        .send(
                            "PUT",
                            "/api/todos/4",
                            &[&line, "Content-Type: application/json"],
                            body.as_bytes(),
                        )
                        .status
                })
            })
            .collect();
        let mut statuses: Vec<u16> = racers
            .into_iter()
            .map(|racer| racer.join().expect("a racer"))
            .collect();
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 412], "round {round}");
        let title = server.get("/api/todos/4").json()["title"].clone();
        assert!(
            title
                .as_str()
                .is_some_and(|t| t.starts_with(&format!("round {round} "))),
            "{title}"
        );
    }
    let _: Value = server.get("/api/todos").json();
}
