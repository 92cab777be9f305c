//! A server that stores, written as plainly as the stack allows, for
//! `scripts/bench.sh`: the baseline's bare loop (`common/bare.rs`) with a
//! `Mutex<BTreeMap>` of todos behind it. Each request's body is read and
//! parsed into a struct by serde, the store locked and changed, and the
//! item serialized and encoded as the baseline's responses are. No
//! validation beyond serde's, no entity tags, no list cache, no limits.
//!
//! It shows what storing costs on this stack by itself: its ratio to the
//! baseline is about the most a server that keeps what it is sent can
//! reach, whatever else it does.
//!
//! It answers what the benchmark asks, with the real server's paths:
//! - `GET /api/todos`: every todo, serialized afresh;
//! - `GET`, `PUT`, `PATCH /api/todos/{id}`: one todo (`PUT` and `PATCH`
//!   merge the fields sent, as the real server does);
//! - `POST /api/todos`: 201 with the new todo and its `Location`;
//! - `DELETE /api/todos/{id}`: 204;
//! - anything else: 404; a body serde cannot read: 400.
//!
//! Run: `cargo run --release --example bench_store -- --port 8083 --threads 2`
//! (it takes the server's own flags; it prints `listening on http://ADDR`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use widgets_todos::http::Method;
use widgets_todos::http::Response;

#[path = "common/bare.rs"]
mod bare;
// Its fixed todos are for the servers that answer without a store.
#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
use bare::Answer;
use common::Asked;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Todo {
    id: u64,
    user_id: u64,
    title: String,
    completed: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewTodo {
    user_id: u64,
    title: String,
    #[serde(default)]
    completed: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Changes {
    user_id: Option<u64>,
    title: Option<String>,
    completed: Option<bool>,
}

#[derive(Default)]
struct Todos {
    last_id: u64,
    by_id: BTreeMap<u64, Todo>,
}

struct Minimal {
    todos: Mutex<Todos>,
    /// The `Date` header, fixed at start-up as the baseline's is.
    date: String,
}

impl Minimal {
    fn reply(&self, request: &mut tiny_http::Request) -> Response {
        let method = Method::parse(request.method().as_str());
        let asked = common::asked(method, request.url());
        let id = request
            .url()
            .strip_prefix("/api/todos/")
            .and_then(|id| id.parse::<u64>().ok());
        let mut body = Vec::new();
        if request.as_reader().read_to_end(&mut body).is_err() {
            return Response::empty(400);
        }
        let mut todos = self.todos.lock().unwrap_or_else(PoisonError::into_inner);
        match (asked, id) {
            (Asked::List, _) => Response::json(200, &todos.by_id.values().collect::<Vec<_>>()),
            (Asked::Create, _) => {
                let Ok(new) = serde_json::from_slice::<NewTodo>(&body) else {
                    return Response::empty(400);
                };
                todos.last_id += 1;
                let id = todos.last_id;
                let todo = Todo {
                    id,
                    user_id: new.user_id,
                    title: new.title,
                    completed: new.completed,
                };
                let reply = Response::json(201, &todo);
                todos.by_id.insert(id, todo);
                reply.with_header("Location", format!("/api/todos/{id}"))
            }
            (Asked::One, Some(id)) if method == Method::Get => match todos.by_id.get(&id) {
                Some(todo) => Response::json(200, todo),
                None => Response::empty(404),
            },
            (Asked::One, Some(id)) => {
                let Ok(changes) = serde_json::from_slice::<Changes>(&body) else {
                    return Response::empty(400);
                };
                let Some(todo) = todos.by_id.get_mut(&id) else {
                    return Response::empty(404);
                };
                if let Some(user_id) = changes.user_id {
                    todo.user_id = user_id;
                }
                if let Some(title) = changes.title {
                    todo.title = title;
                }
                if let Some(completed) = changes.completed {
                    todo.completed = completed;
                }
                Response::json(200, todo)
            }
            (Asked::Delete, Some(id)) if todos.by_id.remove(&id).is_some() => Response::empty(204),
            _ => Response::empty(404),
        }
    }
}

impl Answer for Minimal {
    fn answer(&self, request: &mut tiny_http::Request) -> Cow<'_, [u8]> {
        let reply = self.reply(request);
        Cow::Owned(reply.encode(&self.date, false, None))
    }
}

fn main() -> ExitCode {
    match common::config("minimal") {
        Ok(config) => {
            let minimal = Minimal {
                todos: Mutex::default(),
                date: httpdate::fmt_http_date(SystemTime::now()),
            };
            bare::serve("minimal", &config, minimal)
        }
        Err(status) => status,
    }
}
