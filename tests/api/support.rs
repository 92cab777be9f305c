//! Starting a server in-process on 127.0.0.1:0, and a small HTTP client
//! over a plain `TcpStream`, so the bytes on the wire stay visible.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use widgets_todos::app::{App, Options};
use widgets_todos::config::Config;
use widgets_todos::http::Handler;
use widgets_todos::store::Store;
use widgets_todos::transport::{self, Server, Stopper};

/// Every socket read in the tests gives up after this long.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

pub struct TestServer {
    pub addr: SocketAddr,
    remote: Remote,
    pub app: Option<Arc<App>>,
    stopper: Stopper,
    server: Option<Server>,
}

pub fn config() -> Config {
    Config {
        host: "127.0.0.1".into(),
        port: 0,
        threads: 2,
        ..Config::default()
    }
}

impl TestServer {
    /// A server with the real router and an empty store.
    pub fn start() -> TestServer {
        TestServer::with_config(config())
    }

    pub fn with_config(config: Config) -> TestServer {
        let app = Arc::new(App::with_options(
            Store::new(config.max_items),
            Options::from_config(&config),
        ));
        let server = widgets_todos::start_app(&config, Arc::clone(&app)).expect("start server");
        TestServer::wrap(server, Some(app))
    }

    /// A server with the real router over `store`.
    pub fn with_store(store: Store) -> TestServer {
        TestServer::with_app(App::new(store))
    }

    /// A server running `app` with the test configuration.
    pub fn with_app(app: App) -> TestServer {
        let app = Arc::new(app);
        let server = widgets_todos::start_app(&config(), Arc::clone(&app)).expect("start server");
        TestServer::wrap(server, Some(app))
    }

    /// A server whose every request goes to `handler`.
    pub fn with_handler(handler: Arc<dyn Handler>) -> TestServer {
        let config = config();
        let settings = widgets_todos::transport_settings(&config);
        let listener = transport::bind(&config.host, config.port, &settings).expect("bind");
        let server =
            Server::start(listener, &settings, handler, Arc::default()).expect("start server");
        TestServer::wrap(server, None)
    }

    fn wrap(server: Server, app: Option<Arc<App>>) -> TestServer {
        TestServer {
            addr: server.addr(),
            remote: Remote(server.addr()),
            app,
            stopper: server.stopper(),
            server: Some(server),
        }
    }

    /// How many connections the server holds open.
    pub fn open_connections(&self) -> usize {
        self.server.as_ref().map_or(0, Server::open_connections)
    }

    pub fn store(&self) -> &Store {
        &self.app.as_ref().expect("server has the real app").store
    }
}

/// The client side: requests to a server at a known address (the
/// in-process `TestServer` derefs to one).
pub struct Remote(pub SocketAddr);

impl std::ops::Deref for TestServer {
    type Target = Remote;

    fn deref(&self) -> &Remote {
        &self.remote
    }
}

impl Remote {
    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.0).expect("connect");
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream.set_write_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream
    }

    /// Sends raw bytes on a new connection and reads until the server closes.
    pub fn raw(&self, bytes: &[u8]) -> Vec<u8> {
        let mut stream = self.connect();
        stream.write_all(bytes).expect("write");
        read_to_close(&mut stream)
    }

    /// One request on its own connection; `headers` are full lines.
    pub fn send(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Response {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
        for header in headers {
            head.push_str(header);
            head.push_str("\r\n");
        }
        if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        let wire = self.raw(&bytes);
        let mut responses = parse_responses(&wire, method == "HEAD");
        assert_eq!(
            responses.len(),
            1,
            "expected one response, got:\n{}",
            String::from_utf8_lossy(&wire)
        );
        responses.remove(0)
    }

    pub fn get(&self, path: &str) -> Response {
        self.send("GET", path, &[], b"")
    }

    pub fn delete(&self, path: &str) -> Response {
        self.send("DELETE", path, &[], b"")
    }

    /// A CORS preflight from a page at `http://localhost:3000`, asking
    /// whether `method` may follow on `path`.
    pub fn preflight(&self, path: &str, method: &str) -> Response {
        let asked = format!("Access-Control-Request-Method: {method}");
        let headers = ["Origin: http://localhost:3000", asked.as_str()];
        self.send("OPTIONS", path, &headers, b"")
    }

    /// A request with a JSON body.
    pub fn json(&self, method: &str, path: &str, body: &str) -> Response {
        self.send(
            method,
            path,
            &["Content-Type: application/json"],
            body.as_bytes(),
        )
    }

    /// A request with a form body.
    pub fn form(&self, method: &str, path: &str, body: &str) -> Response {
        self.send(
            method,
            path,
            &["Content-Type: application/x-www-form-urlencoded"],
            body.as_bytes(),
        )
    }

    /// Creates an item and returns its JSON.
    pub fn create(&self, path: &str, body: &str) -> Value {
        let response = self.json("POST", path, body);
        assert_eq!(response.status, 201, "{response:?}");
        response.json()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(server) = self.server.take() {
            let _ = server.wait();
        }
    }
}

pub fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => return out,
            // A signal arrived during the read: nothing was read, try again
            // (`std::io::Read` says so).
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => panic!(
                "read failed after {} bytes: {err}\n{}",
                out.len(),
                String::from_utf8_lossy(&out)
            ),
        }
    }
}

/// Reads exactly `count` responses from a keep-alive connection.
pub fn read_responses(stream: &mut TcpStream, count: usize, head_only: bool) -> Vec<Response> {
    let mut wire = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        let parsed = parse_responses(&wire, head_only);
        if parsed.len() >= count && parsed.iter().all(|r| r.complete) {
            return parsed;
        }
        let n = stream.read(&mut buf).expect("read response");
        assert!(
            n > 0,
            "connection closed early:\n{}",
            String::from_utf8_lossy(&wire)
        );
        wire.extend_from_slice(&buf[..n]);
    }
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    complete: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_count(&self, name: &str) -> usize {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .count()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Splits a byte stream into responses, framing bodies by Content-Length
/// or chunked encoding; 1xx responses are skipped.
pub fn parse_responses(mut wire: &[u8], head_only: bool) -> Vec<Response> {
    let mut out = Vec::new();
    while let Some(end) = find(wire, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&wire[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("").to_string();
        let status: u16 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
            .collect();
        let rest = &wire[end + 4..];
        let mut response = Response {
            status,
            version,
            headers,
            body: Vec::new(),
            complete: true,
        };
        if (100..200).contains(&status) {
            wire = rest;
            continue;
        }
        let length = response
            .header("Content-Length")
            .and_then(|v| v.parse::<usize>().ok());
        let chunked = response
            .header("Transfer-Encoding")
            .is_some_and(|v| v.contains("chunked"));
        if head_only || status == 204 || status == 304 {
            wire = rest;
        } else if chunked {
            let (body, used) = dechunk(rest);
            response.complete = used.is_some();
            response.body = body;
            wire = &rest[used.unwrap_or(rest.len())..];
        } else {
            let n = length.unwrap_or(rest.len());
            response.complete = rest.len() >= n;
            response.body = rest[..n.min(rest.len())].to_vec();
            wire = &rest[n.min(rest.len())..];
        }
        out.push(response);
    }
    out
}

fn dechunk(mut data: &[u8]) -> (Vec<u8>, Option<usize>) {
    let total = data.len();
    let mut body = Vec::new();
    while let Some(line_end) = find(data, b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
        else {
            return (body, None);
        };
        let start = line_end + 2;
        if size == 0 {
            return match find(&data[start..], b"\r\n") {
                Some(e) => (body, Some(total - data.len() + start + e + 2)),
                None => (body, None),
            };
        }
        if data.len() < start + size + 2 {
            return (body, None);
        }
        body.extend_from_slice(&data[start..start + size]);
        data = &data[start + size + 2..];
    }
    (body, None)
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads until a whole head has come (up to the blank line, and whatever
/// came with it), without waiting for the connection to close; `what` is
/// what the test waits for, for the message when it closes first.
pub fn read_head(stream: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while find(&seen, b"\r\n\r\n").is_none() {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "closed before {what}");
        seen.extend_from_slice(&buf[..n]);
    }
    seen
}

/// Checks the problem+json shape every error must have and returns its body.
pub fn problem(response: &Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{}", response.text());
    assert_eq!(
        response.header("Content-Type"),
        Some("application/problem+json"),
        "{response:?}"
    );
    assert_eq!(response.header("Cache-Control"), Some("no-cache"));
    assert_eq!(
        response.header("Content-Length"),
        Some(response.body.len().to_string().as_str())
    );
    let body = response.json();
    assert_eq!(body["type"], "about:blank", "{body}");
    assert_eq!(body["status"], status, "{body}");
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert!(
        body["detail"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    // The request's id, as the response's X-Request-Id names it.
    let id = response.header("X-Request-Id").expect("X-Request-Id");
    assert_eq!(body["instance"], format!("urn:request:{id}"), "{body}");
    // The sentence clients show, `message`: the detail first, the
    // hint last.
    let message = body["message"].as_str().expect("a message member");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(message.starts_with(detail), "{body}");
    if let Some(hint) = body["hint"].as_str() {
        assert!(message.ends_with(&format!("; {hint}")), "{body}");
    }
    if status != 422 {
        assert_eq!(body.get("errors"), None, "{body}");
    }
    body
}

/// The field names of a 422's `errors` object, in order, each with a
/// non-empty message that `message` repeats; its `root.serverError` is
/// the `message`.
pub fn error_fields(response: &Response) -> Vec<String> {
    let body = problem(response, 422);
    let errors = body["errors"].as_object().expect("an errors object");
    let message = body["message"].as_str().unwrap_or_default();
    assert_eq!(errors["root"]["serverError"], message, "{body}");
    errors
        .iter()
        .filter(|(field, _)| *field != "root")
        .map(|(field, error)| {
            let error = error.as_str().expect("a field's error is a string");
            assert!(!error.is_empty(), "{body}");
            assert!(message.contains(&format!("{field} {error}")), "{body}");
            field.clone()
        })
        .collect()
}

/// A fresh directory under the system's temporary directory, removed when
/// dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!(
            "widgets-todos-test-{}-{name}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    pub fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The ids of a 200 list response, in its order.
pub fn ids(response: &Response) -> Vec<u64> {
    assert_eq!(response.status, 200, "{}", response.text());
    let items = response.json();
    let items = items.as_array().expect("a JSON array");
    items
        .iter()
        .map(|item| item["id"].as_u64().expect("an id"))
        .collect()
}
