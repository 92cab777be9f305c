//! CORS, the health check, and the OpenAPI document.

use serde_json::{Value, json};
use widgets_todos::app::EXPOSED;
use widgets_todos::config::Cors;

use crate::support::{TestServer, config, problem};

fn with_cors(cors: Cors) -> TestServer {
    TestServer::with_config(widgets_todos::config::Config { cors, ..config() })
}

/// The header fields a response to a script of `origin` carries, as
/// json-server sends them by default: the origin echoed, credentials
/// allowed (a `fetch` with `credentials: 'include'` refuses `*`), and the
/// answer said to vary with `Origin`.
fn echoed(response: &crate::support::Response, origin: &str) {
    assert_eq!(response.header("Access-Control-Allow-Origin"), Some(origin));
    assert_eq!(
        response.header("Access-Control-Allow-Credentials"),
        Some("true")
    );
    assert_eq!(response.header("Vary"), Some("Origin"));
}

#[test]
fn cors_echoes_any_origin_with_credentials_by_default() {
    let server = TestServer::start();
    let origin = "Origin: http://localhost:3000";
    for response in [
        server.send("GET", "/api/todos", &[origin], b""),
        server.send(
            "POST",
            "/api/todos",
            &[origin, "Content-Type: application/json"],
            b"{}",
        ),
        server.send("GET", "/api/nothing", &[origin], b""),
    ] {
        echoed(&response, "http://localhost:3000");
        assert_eq!(
            response.header("Access-Control-Expose-Headers"),
            Some(EXPOSED)
        );
    }
    // Without `Origin` (curl, a server-side client), nothing but `Vary`.
    let plain = server.send("GET", "/api/todos", &[], b"");
    assert_eq!(plain.header("Vary"), Some("Origin"));
    for name in [
        "Access-Control-Allow-Origin",
        "Access-Control-Allow-Credentials",
        "Access-Control-Expose-Headers",
    ] {
        assert_eq!(plain.header(name), None, "{name}");
    }
    // A preflight, for any method and headers the path takes; a
    // credentialed request asks for its `Authorization` header by name.
    let preflight = server.send(
        "OPTIONS",
        "/api/todos",
        &[
            origin,
            "Access-Control-Request-Method: POST",
            "Access-Control-Request-Headers: authorization, content-type, x-request-id",
        ],
        b"",
    );
    assert_eq!(preflight.status, 204);
    echoed(&preflight, "http://localhost:3000");
    assert_eq!(
        preflight.header("Access-Control-Allow-Methods"),
        Some("GET, HEAD, POST, OPTIONS")
    );
    assert_eq!(
        preflight.header("Access-Control-Allow-Headers"),
        Some("authorization, content-type, x-request-id")
    );
    assert!(preflight.header("Access-Control-Max-Age").is_some());
    let item = server.send(
        "OPTIONS",
        "/api/todos/5?x=1",
        &[origin, "Access-Control-Request-Method: DELETE"],
        b"",
    );
    assert_eq!(item.status, 204);
    assert_eq!(
        item.header("Access-Control-Allow-Methods"),
        Some("GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
    );
    // `/` varies with `Accept` too: one field line for both.
    let home = server.send("GET", "/", &[origin], b"");
    assert_eq!(home.header("Vary"), Some("Accept, Origin"));
}

#[test]
fn cors_restricted_to_listed_origins() {
    let server = with_cors(Cors::Origins(vec!["http://app.test:3000".into()]));
    let allowed = server.send("GET", "/api/todos", &["Origin: http://app.test:3000"], b"");
    echoed(&allowed, "http://app.test:3000");
    assert_eq!(
        allowed.header("Access-Control-Expose-Headers"),
        Some(EXPOSED)
    );
    let other = server.send("GET", "/api/todos", &["Origin: http://evil.test"], b"");
    assert_eq!(other.status, 200);
    assert_eq!(other.header("Access-Control-Allow-Origin"), None);
    assert_eq!(other.header("Access-Control-Allow-Credentials"), None);
    assert_eq!(other.header("Vary"), Some("Origin"));

    let off = with_cors(Cors::Off);
    let response = off.send("GET", "/api/todos", &["Origin: http://app.test:3000"], b"");
    assert_eq!(response.header("Access-Control-Allow-Origin"), None);
    assert_eq!(response.header("Access-Control-Expose-Headers"), None);
    assert_eq!(response.header("Vary"), None);
}

#[test]
fn health_check() {
    let server = TestServer::start();
    let health = server.get("/healthz");
    assert_eq!(health.status, 200);
    assert_eq!(health.json(), json!({"status": "ok"}));
    assert_eq!(server.send("HEAD", "/healthz", &[], b"").status, 200);
    assert_eq!(server.send("OPTIONS", "/healthz", &[], b"").status, 204);
    problem(&server.send("POST", "/healthz", &[], b""), 405);
    problem(&server.get("/healthz?verbose=1"), 400);
    problem(&server.get("/api/healthz"), 404);
}

#[test]
fn openapi_document_is_served() {
    let server = TestServer::start();
    let response = server.get("/api/openapi.json");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("Content-Type"), Some("application/json"));
    let document: Value = response.json();
    assert_eq!(document["openapi"], "3.1.0");
    for path in [
        "/",
        "/api",
        "/api/widgets",
        "/api/widgets/{id}",
        "/api/todos",
        "/api/todos/{id}",
        "/api/openapi.json",
        "/healthz",
    ] {
        assert!(document["paths"].get(path).is_some(), "{path} undocumented");
    }
    assert!(response.header("ETag").is_some());
    assert_eq!(
        server.send("HEAD", "/api/openapi.json", &[], b"").status,
        200
    );
    problem(&server.send("DELETE", "/api/openapi.json", &[], b""), 405);
}
