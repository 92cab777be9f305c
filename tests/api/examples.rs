//! The learner's first server, `examples/minimal.rs`, run as a learner runs
//! it: its own binary, talked to over a real socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The example, built by `cargo test` beside this test binary
/// (`target/debug/examples/minimal`), on a free port.
struct Minimal {
    child: Child,
    address: String,
}

impl Minimal {
    fn start() -> Minimal {
        let mut path = std::env::current_exe().unwrap();
        path.pop(); // deps/
        path.pop();
        let path: PathBuf = path.join("examples").join("minimal");
        let mut child = Command::new(&path)
            .arg("127.0.0.1:0")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| {
                panic!("{} (cargo build --example minimal): {err}", path.display())
            });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on http://")
            .and_then(|rest| rest.strip_suffix("/todos"))
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Minimal { child, address }
    }

    /// One request on a connection of its own; the whole response.
    fn send(&self, method: &str, path: &str, body: &str) -> String {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }
}

impl Drop for Minimal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn date(response: &str) -> &str {
    response
        .lines()
        .find_map(|line| line.strip_prefix("Date: "))
        .unwrap_or_else(|| panic!("no Date in {response:?}"))
}

#[test]
fn the_first_example_keeps_a_todo_list() {
    let server = Minimal::start();
    let created = server.send("POST", "/todos", "Buy \"milk\"");
    assert!(created.starts_with("HTTP/1.1 201 "), "{created}");
    assert!(created.contains("\r\nLocation: /todos/1\r\n"), "{created}");
    assert!(created.ends_with(r#"{"id":1,"title":"Buy \"milk\"","completed":false}"#));
    let done = server.send("PATCH", "/todos/1", "");
    assert!(done.ends_with(r#""completed":true}"#), "{done}");
    let list = server.send("GET", "/todos", "");
    assert!(list.ends_with(r#"[{"id":1,"title":"Buy \"milk\"","completed":true}]"#));
    let refused = server.send("PUT", "/todos/1", "x");
    assert!(refused.starts_with("HTTP/1.1 405 "), "{refused}");
    assert!(
        refused.contains("\r\nAllow: GET, PATCH, DELETE\r\n"),
        "{refused}"
    );
    assert!(
        server
            .send("GET", "/todos/x", "")
            .starts_with("HTTP/1.1 404 ")
    );
    assert!(
        server
            .send("POST", "/todos", " ")
            .starts_with("HTTP/1.1 400 ")
    );
    assert!(
        server
            .send("DELETE", "/todos/1", "")
            .starts_with("HTTP/1.1 204 ")
    );
    assert!(
        server
            .send("GET", "/todos/1", "")
            .starts_with("HTTP/1.1 404 ")
    );
}

/// `Date` is the time of each response (RFC 9110 section 6.6.1), not of
/// the start: two responses more than a second apart differ.
#[test]
fn the_first_example_dates_each_response() {
    let server = Minimal::start();
    let first = server.send("GET", "/todos", "");
    std::thread::sleep(Duration::from_millis(1100));
    let second = server.send("GET", "/todos", "");
    assert_ne!(date(&first), date(&second));
}
