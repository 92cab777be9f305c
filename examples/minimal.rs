//! A whole todo server in one file, on the standard library and the HTTP
//! library alone: the first thing to read before the real server.
//!
//! Four threads share one listening server and one list of todos. Each
//! thread loops: take the next request the library has read off a
//! connection, route it by its method and path, lock the list, change it,
//! answer. Everything the real server adds (validation, error documents,
//! entity tags, limits, persistence) is left out, so the shape shows.
//!
//! It takes plain text in and gives JSON out:
//!
//! - `GET /todos`: every todo, as a JSON array;
//! - `POST /todos` with the title as the body: 201, the todo, `Location`;
//! - `GET /todos/{id}`: one todo, or 404;
//! - `PATCH /todos/{id}`: marks it completed;
//! - `DELETE /todos/{id}`: 204, or 404;
//! - another method there: 405 with `Allow`; any other path: 404.
//!
//! Run it and talk to it:
//!
//! ```sh
//! cargo run --example minimal      # or: -- 127.0.0.1:9000 (default :8083)
//! curl -i localhost:8083/todos -d 'Buy milk'
//! curl -i localhost:8083/todos
//! ```

use std::io::{Cursor, Read};
use std::sync::{Arc, Mutex};
use std::thread;

use tiny_http::{Header, Method, Request, Response, Server};

/// One todo. The real server's has a `userId` too.
struct Todo {
    id: u64,
    title: String,
    completed: bool,
}

/// The list, and the last id given, so that no id is given twice.
#[derive(Default)]
struct Todos {
    last_id: u64,
    items: Vec<Todo>,
}

/// A body longer than this is refused: a server that reads whatever it is
/// sent can be made to run out of memory by one client.
const MAX_BODY: u64 = 64 * 1024;

fn main() {
    // The address: the first argument, if any (port 0: any free port).
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8083".to_owned());
    let server = match Server::http(&address) {
        Ok(server) => Arc::new(server),
        Err(err) => {
            eprintln!("minimal: cannot listen on {address}: {err}");
            std::process::exit(1);
        }
    };
    println!("listening on http://{}/todos", server.server_addr());
    let todos = Arc::new(Mutex::new(Todos::default()));
    // Three threads of their own, and this one the fourth.
    for _ in 1..4 {
        let (server, todos) = (Arc::clone(&server), Arc::clone(&todos));
        thread::spawn(move || serve(&server, &todos));
    }
    serve(&server, &todos);
}

/// One thread's loop. `recv` waits until the library has read a request's
/// head off some connection (a head it could not read, it has answered
/// with 400 itself); the body is read through the request, if at all.
fn serve(server: &Server, todos: &Mutex<Todos>) {
    while let Ok(next) = server.recv() {
        let Ok(mut request) = next else { continue };
        let response = answer(&mut request, todos);
        // The library adds `Date` (the time of this response),
        // `Content-Length`, and `Connection: close` when the connection
        // ends after it.
        if let Err(err) = request.respond(response) {
            eprintln!("minimal: a response was not sent: {err}");
        }
    }
}

type Reply = Response<Cursor<Vec<u8>>>;

/// The routing table: the method and the path's segments matched at once,
/// so that 404 (no such resource) and 405 (not this method here, RFC 9110
/// section 15.5.6) come from one place.
fn answer(request: &mut Request, todos: &Mutex<Todos>) -> Reply {
    // The body first, before the lock: a client that sends slowly must not
    // hold the list while the others wait.
    let mut body = String::new();
    let read = request
        .as_reader()
        .take(MAX_BODY + 1)
        .read_to_string(&mut body);
    let path = request.url().split('?').next().unwrap_or("");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = request.method();
    // A lock is poisoned when a thread panicked holding it; each change
    // below is one step, so the list is still whole: go on with it.
    let mut todos = todos
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match (method, segments.as_slice()) {
        (Method::Get, ["todos"]) => {
            let items: Vec<String> = todos.items.iter().map(json).collect();
            json_reply(200, format!("[{}]", items.join(",")))
        }
        (Method::Post, ["todos"]) => {
            let title = body.trim();
            if read.is_err() || body.len() as u64 > MAX_BODY || title.is_empty() {
                return text(400, "send the title as the body: UTF-8 text, up to 64 KiB");
            }
            todos.last_id += 1;
            let todo = Todo {
                id: todos.last_id,
                title: title.to_owned(),
                completed: false,
            };
            let location = format!("/todos/{}", todo.id);
            let reply = json_reply(201, json(&todo)).with_header(header("Location", &location));
            todos.items.push(todo);
            reply
        }
        (Method::Get | Method::Patch | Method::Delete, ["todos", id]) => {
            // An id that is not a number names no todo: 404, like any other.
            let id = id.parse::<u64>().ok();
            let Some(at) = todos.items.iter().position(|todo| Some(todo.id) == id) else {
                return text(404, "no such todo");
            };
            match method {
                Method::Get => json_reply(200, json(&todos.items[at])),
                Method::Patch => {
                    todos.items[at].completed = true;
                    json_reply(200, json(&todos.items[at]))
                }
                _ => {
                    todos.items.remove(at);
                    Response::from_data(Vec::new()).with_status_code(204)
                }
            }
        }
        (_, ["todos"]) => {
            text(405, "use GET or POST here").with_header(header("Allow", "GET, POST"))
        }
        (_, ["todos", _]) => text(405, "use GET, PATCH or DELETE here")
            .with_header(header("Allow", "GET, PATCH, DELETE")),
        _ => text(404, "no such path; try /todos"),
    }
}

/// A todo as JSON, written by hand: the real server uses serde.
fn json(todo: &Todo) -> String {
    let (id, title, completed) = (todo.id, json_string(&todo.title), todo.completed);
    format!(r#"{{"id":{id},"title":{title},"completed":{completed}}}"#)
}

/// A JSON string: quotes, backslashes and control characters escaped
/// (RFC 8259 section 7); everything else as it is.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_reply(status: u16, body: String) -> Reply {
    Response::from_data(body.into_bytes())
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json"))
}

fn text(status: u16, message: &str) -> Reply {
    Response::from_data(format!("{message}\n").into_bytes())
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

/// A header field of ours. The library refuses only names and values that
/// are not ASCII, and ours all are.
fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes())
        .unwrap_or_else(|_| unreachable!("{name} is ASCII"))
}
