//! The routing table and CORS, without a socket.

use super::*;
use crate::store::Store;

fn call(app: &App, method: &str, target: &str, headers: &[(&'static str, &str)]) -> Response {
    let mut body: &[u8] = b"";
    let mut req = Request {
        method: Method::parse(method),
        method_name: method,
        id: "test-1",
        target,
        headers: headers.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        content_length: None,
        body: &mut body,
        max_body_bytes: 1024,
        body_read: None,
    };
    app.handle(&mut req)
}

fn post(app: &App, target: &str, json: &str) -> Response {
    let mut body = json.as_bytes();
    let mut req = Request {
        method: Method::Post,
        method_name: "POST",
        id: "test-1",
        target,
        headers: vec![("Content-Type", "application/json".into())],
        content_length: Some(json.len() as u64),
        body: &mut body,
        max_body_bytes: 1024,
        body_read: None,
    };
    app.handle(&mut req)
}

#[test]
fn the_resource_a_path_names() {
    let resource = |request_target| target(request_target).0;
    assert_eq!(
        resource("/api/todos/"),
        Target::Collection(Collection::Todos)
    );
    assert_eq!(
        resource("/api/todos//"),
        Target::Item(Collection::Todos, "")
    );
    assert_eq!(resource("/api/todos/1/x/y"), Target::NoneInApi(false));
    assert_eq!(resource("/api/posts/1"), Target::NoneInApi(true));
    assert_eq!(resource("/posts"), Target::Nothing(true));
    assert_eq!(resource("/favicon.ico"), Target::Nothing(false));
    assert_eq!(resource("http://localhost:8080/api"), Target::Index);
    assert_eq!(
        resource("/widgets/7"),
        Target::Misplaced("widgets", Some("7"))
    );
    assert_eq!(resource("/_admin/x"), Target::NoneInAdmin);
    assert_eq!(resource("http://localhost:8080"), Target::Nothing(false));
    assert_eq!(resource("*"), Target::Nothing(false));
}

/// The query is split off at the first `?`, and decoded once.
#[test]
fn the_query_of_a_target() {
    assert_eq!(
        target("/api/todos?title_like=a%20b&_page=2?"),
        (
            Target::Collection(Collection::Todos),
            "title_like=a%20b&_page=2?"
        )
    );
    assert_eq!(
        target("/api/todos/1/?"),
        (Target::Item(Collection::Todos, "1"), "")
    );
    let query = Query::decode("title_like=a%20b&_page=2&_delay=7");
    assert_eq!(
        query.pairs[0],
        ("title_like".to_string(), "a b".to_string())
    );
    assert_eq!(query.delay, Some(Duration::from_millis(7)));
    assert!(Query::decode("").pairs.is_empty());
    assert_eq!(
        Query::decode("_delay=x").error.map(|e| e.status()),
        Some(400)
    );
}

#[test]
fn routes_without_a_socket() {
    let app = App::new(Store::new(10));
    assert_eq!(call(&app, "GET", "/api", &[]).status, 200);
    assert_eq!(
        post(&app, "/api/todos", r#"{"userId": 1, "title": "a"}"#).status,
        201
    );
    assert_eq!(call(&app, "GET", "/api/todos/1/", &[]).status, 200);
    assert_eq!(call(&app, "GET", "/api/todos/01", &[]).status, 404);
    assert_eq!(call(&app, "GET", "/api/nothing", &[]).status, 404);
    assert_eq!(call(&app, "POST", "/api/todos/1", &[]).status, 405);
    assert_eq!(call(&app, "get", "/api", &[]).status, 405);
    assert_eq!(call(&app, "GET", "/api?x=1", &[]).status, 400);
    let options = call(&app, "OPTIONS", "/api/widgets/3", &[]);
    assert_eq!(
        (options.status, options.header("Allow")),
        (204, Some("GET, HEAD, PUT, PATCH, DELETE, OPTIONS"))
    );
}

/// 404, 405 and `OPTIONS` come from the one routing table: the `Allow` of
/// an `OPTIONS` and of a 405 at the same path agree, whatever the
/// configuration leaves off.
#[test]
fn options_and_405_allow_the_same_methods() {
    let reset = Options {
        allow_reset: true,
        record: Some(10),
        ..Options::default()
    };
    for app in [
        App::new(Store::new(10)),
        App::with_options(Store::new(10), reset),
    ] {
        for path in [
            "/",
            "/api",
            "/healthz",
            "/api/openapi.json",
            "/api/events",
            "/api/todos",
            "/api/widgets/2",
            "/_admin/requests",
            "/_admin/requests/x",
        ] {
            let options = call(&app, "OPTIONS", path, &[]);
            let on = app.recorder.is_some() || !path.starts_with("/_admin");
            if !on {
                assert_eq!(options.status, 404, "{path}");
                continue;
            }
            assert_eq!(options.status, 204, "{path}");
            let allow = options.header("Allow").unwrap();
            let other = ["PUT", "POST", "PATCH", "DELETE"]
                .into_iter()
                .find(|method| !allow.contains(method))
                .unwrap();
            let refused = call(&app, other, path, &[]);
            assert_eq!(refused.status, 405, "{other} {path}");
            assert_eq!(refused.header("Allow"), Some(allow), "{other} {path}");
        }
    }
}

/// Without `--record`, the request log's paths say how to turn it on.
#[test]
fn the_request_logs_paths_say_when_it_is_off() {
    let app = App::new(Store::new(10));
    for path in ["/_admin/requests", "/_admin/requests/abc"] {
        let response = call(&app, "GET", path, &[]);
        assert_eq!(response.status, 404, "{path}");
        let body = String::from_utf8_lossy(response.body_bytes()).into_owned();
        assert!(body.contains("--record N"), "{path}: {body}");
    }
}

/// `_delay` holds back an `/api` response only; a health probe's
/// response says it is one, for the access log.
#[test]
fn the_delay_is_for_api_responses_and_probes_are_told() {
    let app = App::new(Store::new(10));
    let api = call(&app, "GET", "/api?_delay=5", &[]);
    assert_eq!((api.status, api.delay), (200, Duration::from_millis(5)));
    let missing = call(&app, "GET", "/api/nothing?_delay=5", &[]);
    assert_eq!(
        (missing.status, missing.delay),
        (404, Duration::from_millis(5))
    );
    let health = call(&app, "GET", "/healthz?_delay=5", &[]);
    assert_eq!(
        (health.status, health.delay, health.probe),
        (200, Duration::ZERO, true)
    );
    assert!(!api.probe);
    assert_eq!(call(&app, "GET", "/api?_delay=x", &[]).status, 400);
}

fn with_cors(cors: Cors) -> App {
    let options = Options {
        cors,
        ..Options::default()
    };
    App::with_options(Store::new(10), options)
}

#[test]
fn any_origin_is_echoed_with_credentials_by_default() {
    let app = with_cors(Cors::Any);
    let response = call(&app, "GET", "/api", &[("Origin", "http://localhost:3000")]);
    for (name, value) in [
        ("Access-Control-Allow-Origin", "http://localhost:3000"),
        ("Access-Control-Allow-Credentials", "true"),
        ("Vary", "Origin"),
        (
            "Access-Control-Expose-Headers",
            "Location, ETag, X-Total-Count, Link, Content-Range, X-Request-Id",
        ),
    ] {
        assert_eq!(response.header(name), Some(value), "{name}");
    }
    // Without `Origin`, only what says the answer depends on it.
    let response = call(&app, "GET", "/api", &[]);
    let names: Vec<_> = response.headers.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["Vary"]);
    // One `Vary` line when the representation already varies.
    let home = call(&app, "GET", "/", &[("Origin", "http://localhost:3000")]);
    assert_eq!(home.header("Vary"), Some("Accept, Origin"));
}

#[test]
fn preflight_lists_the_path_methods_and_echoes_headers() {
    let asked = [
        ("Origin", "http://localhost:3000"),
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "content-type, x-trace"),
    ];
    let response = call(
        &with_cors(Cors::Any),
        "OPTIONS",
        "/api/todos?_page=1",
        &asked,
    );
    assert_eq!(response.status, 204);
    for (name, value) in [
        ("Access-Control-Allow-Origin", "http://localhost:3000"),
        ("Access-Control-Allow-Credentials", "true"),
        ("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS"),
        ("Access-Control-Allow-Headers", "content-type, x-trace"),
        ("Access-Control-Max-Age", "600"),
    ] {
        assert_eq!(response.header(name), Some(value), "{name}");
    }
}

#[test]
fn listed_origins_are_reflected_others_get_nothing() {
    let app = with_cors(Cors::Origins(vec![
        "http://a.test".into(),
        "https://b.test:8443".into(),
    ]));
    let response = call(&app, "GET", "/api", &[("Origin", "https://b.test:8443")]);
    assert_eq!(
        response.header("Access-Control-Allow-Origin"),
        Some("https://b.test:8443")
    );
    assert_eq!(response.header("Vary"), Some("Origin"));
    for origin in [&[("Origin", "http://evil.test")][..], &[]] {
        let response = call(&app, "GET", "/api", origin);
        let cors: Vec<_> = response.headers.iter().map(|(name, _)| *name).collect();
        assert_eq!(cors, ["Vary"]);
    }
    let off = call(
        &with_cors(Cors::Off),
        "GET",
        "/api",
        &[("Origin", "http://a.test")],
    );
    assert!(off.headers.is_empty(), "{:?}", off.headers);
}

/// The routing table is the one place that reads a path: no other source
/// file of `src/` names a path's segment (`"api"`, `"_admin"`,
/// `"healthz"`) or a path under them in a string literal, but those in
/// [`TEXT`], which write paths into what they send and never compare them.
/// Comments and unit tests are not read.
#[test]
fn only_the_routing_table_reads_paths() {
    /// The routing table: `target` and `App::route`. It also writes the
    /// paths of `Location` and `Link`.
    const TABLE: &str = "app.rs";
    /// Files that write paths into text, and why.
    const TEXT: &[(&str, &str)] = &[
        (
            "app/index.rs",
            "the links `/` and `/api` answer with, and the hints of a 404 and a 405",
        ),
        ("app/openapi.rs", "the OpenAPI document's paths"),
        ("error.rs", "the 503 of `/api/events` names its path"),
    ];
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut found = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let name = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let tests = name.ends_with("tests.rs");
        if !name.ends_with(".rs") || tests || name == TABLE || TEXT.iter().any(|(f, _)| *f == name)
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            if line.trim_start().starts_with("//") {
                continue;
            }
            let segments = ["\"api\"", "\"_admin\"", "\"healthz\""];
            let paths = ["\"/api", "\"/_admin", "\"/healthz"];
            if segments.iter().chain(&paths).any(|s| line.contains(s)) {
                found.push(format!("src/{name}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "paths read outside the routing table (src/{TABLE}):\n{}",
        found.join("\n")
    );
}

/// Every file of `src/` has a name of its own, so that a name in a comment,
/// a log line or a trace points at one file. Unit tests are placed one way:
/// those of `name.rs` are `name_tests.rs` beside it, declared at its end as
/// `#[cfg(test)] #[path = "name_tests.rs"] mod tests;`, a child module that
/// sees what the file keeps private.
#[test]
fn no_two_files_of_src_share_a_name_and_unit_tests_sit_beside_their_file() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    let mut seen: std::collections::HashMap<String, std::path::PathBuf> = Default::default();
    let mut wrong = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(other) = seen.insert(name.clone(), path.clone()) {
                wrong.push(format!(
                    "{} and {} share a name",
                    other.display(),
                    path.display()
                ));
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if let Some(owner) = stem.strip_suffix("_tests") {
                if !dir.join(format!("{owner}.rs")).exists() {
                    wrong.push(format!("{}: no {owner}.rs beside it", path.display()));
                }
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let declared = format!("#[cfg(test)]\n#[path = \"{stem}_tests.rs\"]\nmod tests;\n");
            let tested = text.contains("mod tests");
            if tested && (!text.ends_with(&declared) || text.matches("mod tests").count() > 1) {
                wrong.push(format!(
                    "{}: unit tests other than one `mod tests` at its end, in {stem}_tests.rs",
                    path.display()
                ));
            }
            if tested != dir.join(format!("{stem}_tests.rs")).exists() {
                wrong.push(format!(
                    "{}: {stem}_tests.rs and its declaration disagree",
                    path.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
