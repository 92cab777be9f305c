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

/// Runs the import on `input` in a new directory: its exit status, its
/// report (stdout), its error (stderr), and where it was told to write.
fn import(dir: &TempDir, input: &[u8]) -> (Option<i32>, String, String, std::path::PathBuf) {
    let db = dir.join("db.json");
    let out = dir.join("data.json");
    fs::write(&db, input).unwrap();
    let done = run(&["import", path(&db), "--out", path(&out)], &[]);
    let report = String::from_utf8_lossy(&done.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
    (done.status.code(), report, stderr, out)
}

/// The todos the server serves from the data file `out`.
fn served_todos(out: &std::path::Path) -> serde_json::Value {
    let (child, server) = spawn_remote(&["--port", "0", path(out)]);
    let todos = server.get("/api/todos").json();
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    todos
}

/// JSON leaves the meaning of a name given twice open (RFC 8259, section
/// 4), and json-server would keep only the last array: the import refuses
/// rather than drop one without a word.
#[test]
fn import_refuses_a_collection_given_twice_and_writes_nothing() {
    let dir = TempDir::new("import-twice");
    let (code, report, stderr, out) = import(
        &dir,
        br#"{"todos": [{"id": 1, "userId": 1, "title": "A"}],
             "todos": [{"id": 2, "userId": 1, "title": "B"}]}"#,
    );
    assert_eq!(code, Some(1), "{report}{stderr}");
    assert!(
        stderr.contains(r#""todos" is given more than once"#),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
}

/// A body with a name given twice is a 422 ("title is given more than
/// once"); an item of the file is held to the same rule, and left out
/// with that reason, whichever field it is (`id`, and `completed`, whose
/// values the import would otherwise convert or leave out one by one).
#[test]
fn import_leaves_out_an_item_with_a_name_given_twice_as_a_post_is_refused() {
    let dir = TempDir::new("import-names-twice");
    let (code, report, stderr, out) = import(
        &dir,
        br#"{"todos": [
            {"id": 1, "userId": 1, "title": "A", "title": "B"},
            {"id": 2, "id": 3, "userId": 1, "title": "C"},
            {"id": 4, "userId": 1, "title": "D", "completed": "yes", "completed": true},
            {"id": 5, "userId": 1, "title": "E"}]}"#,
    );
    assert_eq!(code, Some(0), "{report}{stderr}");
    for line in [
        "todos: kept 1 of 4 items",
        "left out 1 item: title is given more than once: todos[0] (id 1)",
        "left out 1 item: id is given more than once: todos[1] (id 2)",
        "left out 1 item: completed is given more than once: todos[2] (id 4)",
    ] {
        assert!(
            report.contains(line),
            "the report lacks {line:?}:\n{report}"
        );
    }
    assert_eq!(
        served_todos(&out),
        serde_json::json!([{"id": 5, "userId": 1, "title": "E", "completed": false}])
    );
}

/// No id is left after 2^53-1, the largest a JSON client holds exactly:
/// an item that needs a new one is left out and said so, and the file
/// written is one the server serves.
#[test]
fn import_at_the_top_of_the_id_range_writes_a_file_the_server_serves() {
    let dir = TempDir::new("import-top-id");
    let (code, report, stderr, out) = import(
        &dir,
        br#"{"todos": [{"id": 9007199254740991, "userId": 1, "title": "last"},
                       {"id": "a3f9", "userId": 1, "title": "needs an id"},
                       {"userId": 1, "title": "needs one too"}]}"#,
    );
    assert_eq!(code, Some(0), "{report}{stderr}");
    for line in [
        "todos: kept 1 of 3 items",
        r#"left out 2 items: needs a new id, and none is left after 9007199254740991 (the largest integer a JSON client holds exactly): todos[1] (id "a3f9"), todos[2]"#,
        "id: 9007199254740991, the highest, is the last there is: the server will create no new todos in this file (ids are never reused)",
    ] {
        assert!(
            report.contains(line),
            "the report lacks {line:?}:\n{report}"
        );
    }
    assert_eq!(
        served_todos(&out),
        serde_json::json!([{"id": 9007199254740991_u64, "userId": 1, "title": "last", "completed": false}])
    );
}

/// RFC 8259, section 8.1: a parser may ignore a byte order mark, which
/// Windows editors write at the start of a UTF-8 file.
#[test]
fn import_reads_a_file_that_starts_with_a_byte_order_mark() {
    let dir = TempDir::new("import-bom");
    let (code, report, stderr, out) = import(
        &dir,
        b"\xEF\xBB\xBF{\"todos\": [{\"id\": 1, \"userId\": 1, \"title\": \"A\"}]}",
    );
    assert_eq!(code, Some(0), "{report}{stderr}");
    assert!(report.contains("todos: kept 1 of 1 item"), "{report}");
    assert!(!fs::read(&out).unwrap().starts_with(b"\xEF\xBB\xBF"));
    assert_eq!(
        served_todos(&out),
        serde_json::json!([{"id": 1, "userId": 1, "title": "A", "completed": false}])
    );
}

/// The same mark on the server's own data file, edited by hand.
#[test]
fn a_data_file_that_starts_with_a_byte_order_mark_is_served() {
    let dir = TempDir::new("data-bom");
    let data = dir.join("data.json");
    fs::write(
        &data,
        b"\xEF\xBB\xBF{\"todos\": [{\"id\": 1, \"userId\": 1, \"title\": \"A\"}]}",
    )
    .unwrap();
    assert_eq!(
        served_todos(&data),
        serde_json::json!([{"id": 1, "userId": 1, "title": "A", "completed": false}])
    );
}

/// A number made text compares as text: json-server compared `9.99` and
/// `10` as numbers, this server compares `"9.99"` and `"10"` character by
/// character. The report says so where it converts; and says in plain
/// words what happens to a `completed` that is neither true nor false.
#[test]
fn import_says_what_a_number_made_text_means_for_queries_and_what_a_bad_boolean_becomes() {
    let dir = TempDir::new("import-text-numbers");
    let (code, report, stderr, out) = import(
        &dir,
        br#"{"widgets": [{"id": 1, "price": 9.99, "quality": "good"},
                         {"id": 2, "price": 10, "quality": "fine"}],
             "todos": [{"id": 1, "userId": 1, "title": "A", "completed": "yes"},
                       {"id": 2, "userId": 1, "title": "B", "completed": "no"}]}"#,
    );
    assert_eq!(code, Some(0), "{report}{stderr}");
    for line in [
        "price: converted 2 values from numbers to text (9.99, 10)",
        r#"as text, price compares character by character, not by value: price_gte=10 matches "9.99", price_lte=10 does not, and _sort=price puts "10" before "9.99""#,
        r#"completed: 2 values are neither true nor false ("yes", "no"): left out, so those todos have completed false"#,
    ] {
        assert!(
            report.contains(line),
            "the report lacks {line:?}:\n{report}"
        );
    }
    assert!(!report.contains("which are then false"), "{report}");

    // What the report says is what the server does.
    let (child, server) = spawn_remote(&["--port", "0", path(&out)]);
    let ids = |target: &str| -> Vec<u64> {
        let items = server.get(target).json();
        let items = items.as_array().cloned().unwrap_or_default();
        items.iter().filter_map(|w| w["id"].as_u64()).collect()
    };
    assert_eq!(ids("/api/widgets?price_gte=10"), [1, 2]);
    assert_eq!(ids("/api/widgets?price_lte=10"), [2]);
    assert_eq!(ids("/api/widgets?_sort=price"), [2, 1]);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
}
