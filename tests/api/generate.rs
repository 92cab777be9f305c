//! `--generate` and `--seed`: the binary fills a new
//! store with the same items for the same seed, refuses bad specs with
//! exit status 2, and generates into a data file only when it is new.

use crate::cli::{run_expecting_exit, spawn_remote, spawn_remote_env, stop_with};
use crate::support::{Remote, TempDir};

/// The bodies of `GET /api/todos` and `GET /api/widgets`, byte for byte.
fn lists(remote: &Remote) -> (Vec<u8>, Vec<u8>) {
    let todos = remote.get("/api/todos");
    let widgets = remote.get("/api/widgets");
    assert_eq!((todos.status, widgets.status), (200, 200));
    (todos.body, widgets.body)
}

/// Starts the binary with `args`, reads both lists, stops it; returns the
/// lists and the binary's stderr.
fn generated(args: &[&str], env: &[(&str, &str)]) -> ((Vec<u8>, Vec<u8>), String) {
    let (child, remote) = spawn_remote_env(args, env);
    let bodies = lists(&remote);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    (bodies, log)
}

/// Runs the binary, which must exit with status 2 (not serve); its stderr.
fn refused(args: &[&str]) -> String {
    let (code, log) = run_expecting_exit(args, &[]);
    assert_eq!(code, Some(2), "{args:?}: {log}");
    log
}

#[test]
fn the_same_seed_gives_byte_identical_lists() {
    let args = [
        "--port",
        "0",
        "--generate",
        "todos=40,widgets=15",
        "--seed",
        "7",
    ];
    let (first, log) = generated(&args, &[]);
    assert!(
        log.contains("generated: 40 todos, 15 widgets (seed 7)"),
        "{log}"
    );
    let (second, _) = generated(&args, &[]);
    assert_eq!(first, second);
    let todos: serde_json::Value = serde_json::from_slice(&first.0).unwrap();
    let widgets: serde_json::Value = serde_json::from_slice(&first.1).unwrap();
    assert_eq!(todos.as_array().map(Vec::len), Some(40));
    assert_eq!(widgets.as_array().map(Vec::len), Some(15));
    assert_eq!(todos[39]["id"], 40);

    // The environment variables say the same as the flags.
    let env = [("GENERATE", "todos=40,widgets=15"), ("SEED", "7")];
    let (by_env, _) = generated(&["--port", "0"], &env);
    assert_eq!(first, by_env);

    // Another seed, other items.
    let other = [
        "--port",
        "0",
        "--generate",
        "todos=40,widgets=15",
        "--seed",
        "8",
    ];
    let (different, _) = generated(&other, &[]);
    assert_ne!(first.0, different.0);
    assert_ne!(first.1, different.1);
}

#[test]
fn the_generated_items_are_served_like_created_ones() {
    let (child, remote) = spawn_remote(&["--port=0", "--generate=todos=3", "--seed=1"]);
    let todo = remote.get("/api/todos/3").json();
    assert!(
        todo["userId"]
            .as_u64()
            .is_some_and(|id| (1..=10).contains(&id))
    );
    assert!(todo["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(todo["completed"].is_boolean());
    assert_eq!(remote.get("/api/widgets").body, b"[]");
    // The next create takes the next id.
    let created = remote.json("POST", "/api/todos", r#"{"userId": 1, "title": "Mine"}"#);
    assert_eq!(created.json()["id"], 4);
    stop_with(child, "-TERM");
}

#[test]
fn bad_specs_exit_2_with_the_fix() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--generate", "users=3"],
            "the collections todos and widgets",
        ),
        (&["--generate", "todos=many"], "a whole number of items"),
        (&["--generate", "todos=1,todos=2"], "each collection once"),
        (&["--generate", ""], "such as todos=200,widgets=50"),
        (&["--generate", "todos"], "collection=count pairs"),
        (
            &["--generate", "todos=11", "--max-items", "10"],
            "ask for fewer, or raise --max-items",
        ),
        (&["--generate", "todos=1", "--seed", "-3"], "a whole number"),
    ];
    for (args, fix) in cases {
        let log = refused(args);
        assert!(log.contains(fix), "{args:?}: {log}");
    }
}

#[test]
fn with_data_only_a_new_file_is_generated_into() {
    let dir = TempDir::new("generate");
    let db = dir.join("db.json");
    let db = db.to_str().unwrap();
    let args = [
        "--port",
        "0",
        "--data",
        db,
        "--generate",
        "todos=3",
        "--seed",
        "7",
    ];
    let ((todos, _), log) = generated(&args, &[]);
    assert!(log.contains("(a new file)"), "{log}");
    assert!(
        log.contains("generated: 3 todos, 0 widgets (seed 7)"),
        "{log}"
    );

    // Now the file holds data: generating again is refused, nothing changes.
    let log = refused(&["--data", db, "--generate", "todos=3"]);
    assert!(log.contains("already holds data"), "{log}");
    let ((kept, _), _) = generated(&["--port", "0", "--data", db], &[]);
    assert_eq!(kept, todos);

    // An empty file counts as new.
    let empty = dir.join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    let empty = empty.to_str().unwrap();
    let args = [
        "--port",
        "0",
        "--data",
        empty,
        "--generate",
        "todos=3",
        "--seed",
        "7",
    ];
    let ((from_empty, _), _) = generated(&args, &[]);
    assert_eq!(from_empty, todos);
}

/// A data file whose journal holds records holds data, even with
/// no snapshot yet: `--generate` is refused with exit status 2, as for a
/// snapshot, and the refused start creates no file.
#[test]
fn a_journal_without_a_snapshot_holds_data_too() {
    let dir = TempDir::new("generate-journal");
    let db = dir.join("b.json");
    let journal = dir.join("b.json.journal");
    let record = "{\"seq\":1,\"op\":\"put\",\"collection\":\"todos\",\"item\":{\"id\":1,\"userId\":1,\"title\":\"kept\"}}\n";
    std::fs::write(&journal, record).unwrap();
    let log = refused(&["--data", db.to_str().unwrap(), "--generate", "todos=3"]);
    assert!(log.contains("already holds data"), "{log}");
    assert!(log.contains("b.json.journal"), "{log}");
    assert!(!db.exists(), "the refused start created {}", db.display());
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), record);
    // Served without --generate, it holds its one todo.
    let args = ["--port", "0", "--data", db.to_str().unwrap()];
    let ((todos, _), _) = generated(&args, &[]);
    let todos: serde_json::Value = serde_json::from_slice(&todos).unwrap();
    assert_eq!(todos[0]["title"], "kept");
}
