//! What the benchmark's two reference servers (`baseline.rs`, `layer.rs`)
//! share: the server's own flags, and the todos they answer with, built as
//! `scripts/bench.py` seeds the real server.

use std::process::ExitCode;

use widgets_todos::config::{self, Command, Config};
use widgets_todos::http::Method;
use widgets_todos::model::Todo;

/// How many todos the list response holds, as the benchmark stores.
pub const LIST_LEN: u64 = 200;

/// A todo like the ones the benchmark creates.
pub fn todo(id: u64) -> Todo {
    Todo {
        id,
        user_id: id % 10 + 1,
        title: format!("benchmark todo number {id}").into(),
        completed: id % 2 == 0,
    }
}

/// Which of the benchmark's requests a request is, by a glance at its
/// method and path.
pub enum Asked {
    /// `GET /api/todos`
    List,
    /// `POST /api/todos`
    Create,
    /// `GET`, `PUT` or `PATCH /api/todos/{id}`
    One,
    /// `DELETE /api/todos/{id}`
    Delete,
    /// Anything else: 404.
    Other,
}

pub fn asked(method: Method, path: &str) -> Asked {
    let item = path
        .strip_prefix("/api/todos/")
        .is_some_and(|id| !id.is_empty());
    match (method, path == "/api/todos", item) {
        (Method::Get, true, _) => Asked::List,
        (Method::Post, true, _) => Asked::Create,
        (Method::Get | Method::Put | Method::Patch, _, true) => Asked::One,
        (Method::Delete, _, true) => Asked::Delete,
        _ => Asked::Other,
    }
}

/// The server's flags, read as the server reads them. `Err` is the exit
/// status: help asked for, or a bad flag (told on stderr).
pub fn config(name: &str) -> Result<Config, ExitCode> {
    match config::parse(std::env::args().skip(1), |var| std::env::var(var).ok()) {
        Ok(Command::Serve(config)) => Ok(*config),
        Ok(_) => {
            println!("{name}: takes the server's flags; see widgets-todos --help");
            Err(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("{name}: {err}");
            Err(ExitCode::from(2))
        }
    }
}
