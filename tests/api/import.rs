//! The way in from json-server: `widgets-todos import`, on a file like
//! json-server's own sample (`scripts/json-server-db.json`), and the
//! message of a data file refused at start-up.

use std::fs;

use crate::cli::{run, spawn_remote, stop_with};
use crate::support::TempDir;

/// json-server's sample `db.json` (posts, comments, profile) with todos as
/// json-server users keep them: string ids, a `createdAt`, a `userId` and
/// a `completed` given as text, one todo without a title.
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/json-server-db.json");

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn import_keeps_the_todos_converts_what_converts_and_says_what_it_left_out() {
    let dir = TempDir::new("import");
    let out = dir.join("data.json");
    let done = run(&["import", FIXTURE, "--out", path(&out)], &[]);
    let report = String::from_utf8_lossy(&done.stdout);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{report}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    for line in [
        "todos: kept 3 of 4 items",
        r#"id: converted 2 values from text to numbers ("1", "2")"#,
        r#"userId: converted 1 value from text to a number ("1")"#,
        r#"completed: converted 1 value from text to true or false ("false")"#,
        r#"id: gave the new id 3 to 1 item whose id is not a positive integer or repeats one ("a3f9")"#,
        "createdAt: left out of 2 items: not a field of a todo",
        r#"left out 1 item: title is required: todos[3] (id "4")"#,
        "widgets: none in",
        "left out: posts (2 items), comments (2 items), profile (an object): this server keeps only todos and widgets",
        "serve it with: widgets-todos",
    ] {
        assert!(
            report.contains(line),
            "the report lacks {line:?}:\n{report}"
        );
    }

    // The file written is served as it is.
    let (child, server) = spawn_remote(&["--port", "0", path(&out)]);
    let todos = server.get("/api/todos");
    assert_eq!(
        todos.json(),
        serde_json::json!([
            {"id": 1, "userId": 1, "title": "Buy milk", "completed": false},
            {"id": 2, "userId": 1, "title": "Walk the dog", "completed": true},
            {"id": 3, "userId": 2, "title": "Read a book", "completed": false},
        ])
    );
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
}

#[test]
fn import_never_overwrites_and_refuses_what_it_cannot_read() {
    let dir = TempDir::new("import-refused");
    let out = dir.join("data.json");
    fs::write(&out, "mine").unwrap();
    let done = run(&["import", FIXTURE, "--out", path(&out)], &[]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("already exists: give --out a new file"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&out).unwrap(), "mine");

    let fresh = dir.join("fresh.json");
    for (input, said) in [
        ("{\"todos\": [", "is not valid JSON"),
        ("[1, 2]", "should be an object of collections"),
        (
            "{\"posts\": []}",
            "holds neither todos nor widgets (it holds posts)",
        ),
    ] {
        let db = dir.join("db.json");
        fs::write(&db, input).unwrap();
        let done = run(&["import", path(&db), "--out", path(&fresh)], &[]);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{input}: {stderr}");
        assert!(stderr.contains(said), "{input}: {stderr}");
        assert!(!fresh.exists(), "{input}: nothing written");
    }

    for (args, said) in [
        (vec!["import", FIXTURE], "import needs --out PATH"),
        (
            vec!["import", "--out", "x.json"],
            "import needs the json-server file to read",
        ),
        (vec!["import", FIXTURE, "--out"], "'--out' needs a value"),
        (
            vec!["import", FIXTURE, "--force", "--out", "x.json"],
            "'--force'",
        ),
    ] {
        let done = run(&args, &[]);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
    assert!(!std::path::Path::new("x.json").exists());
}

/// A json-server file given to the server as its data: refused, with the
/// fix (the import command) and without the snapshot's internal names.
#[test]
fn a_json_server_file_refused_at_start_up_says_how_to_fix_it() {
    let dir = TempDir::new("refused-db");
    let cases = [
        (
            fs::read_to_string(FIXTURE).unwrap(),
            "unknown collection \"posts\" (this server keeps only widgets and todos)",
        ),
        (
            r#"{"todos": [{"id": 1, "userId": 1, "title": "a", "createdAt": "2024"}]}"#.to_string(),
            "createdAt is not a field of a todo",
        ),
        (
            r#"{"todos": [{"id": "1", "userId": 1, "title": "a"}]}"#.to_string(),
            "todos[0]",
        ),
    ];
    for (n, (text, said)) in cases.iter().enumerate() {
        let db = dir.join(&format!("db{n}.json"));
        fs::write(&db, text).unwrap();
        let done = run(&["--port", "0", path(&db)], &[]);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        let fix = format!("widgets-todos import {} --out data.json", db.display());
        assert!(stderr.contains(&fix), "{stderr} lacks {fix}");
        assert!(
            !stderr.contains("seq") && !stderr.contains("lastId"),
            "{stderr}"
        );
        assert_eq!(
            &fs::read_to_string(&db).unwrap(),
            text,
            "the file is left alone"
        );
    }
}
