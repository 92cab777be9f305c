//! `--data`: loading, the journal, compaction, and what survives a crash.
//! (`scripts/crash.py` kills the real binary mid-write, many times over.)

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use widgets_todos::model::Todo;
use widgets_todos::store::Store;

use crate::cli::{BIN, kill_9, run, spawn_remote, stop_with, wait_with_timeout};
use crate::support::{TempDir, TestServer, problem};

fn journal_lines(path: &std::path::Path) -> usize {
    let mut journal = path.as_os_str().to_owned();
    journal.push(".journal");
    fs::read_to_string(journal).map_or(0, |text| text.lines().count())
}

/// Starts the binary on `data` (and `extra` flags), which must refuse to
/// start: exit status 1 within 10 s. Returns its stderr. A server that
/// starts instead is killed, and the test fails.
fn refused_start(data: &std::path::Path, extra: &[&str]) -> String {
    use std::io::Read;
    let mut child = std::process::Command::new(BIN)
        .args([
            "--port",
            "0",
            "--data",
            data.to_str().expect("a UTF-8 path"),
        ])
        .args(extra)
        .env_clear()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the binary");
    let status = wait_with_timeout(&mut child, Duration::from_secs(10));
    let mut out = String::new();
    let mut err = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    if status.is_none() {
        let _ = child.wait();
    }
    assert!(status.is_some(), "the server started: {out}{err}");
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{out}{err}");
    err
}

#[test]
fn writes_survive_kill_9_and_ids_are_never_reused() {
    let dir = TempDir::new("kill9");
    let data = dir.join("data.json");
    let data_arg = data.to_str().expect("a UTF-8 path");
    let (child, server) = spawn_remote(&["--port", "0", "--data", data_arg]);
    for title in ["a", "b", "c"] {
        server.create(
            "/api/todos",
            &format!(r#"{{"userId": 1, "title": "{title}"}}"#),
        );
    }
    let patched = server.json("PATCH", "/api/todos/2", r#"{"completed": true}"#);
    assert_eq!(patched.status, 200);
    assert_eq!(server.delete("/api/todos/3").status, 200);
    server.create("/api/widgets", r#"{"price": "$1", "quality": "ok"}"#);
    kill_9(child);

    let (child, server) = spawn_remote(&["--port", "0", "--data", data_arg]);
    assert_eq!(
        server.get("/api/todos").json(),
        json!([
            {"id": 1, "userId": 1, "title": "a", "completed": false},
            {"id": 2, "userId": 1, "title": "b", "completed": true}
        ])
    );
    assert_eq!(
        server.get("/api/widgets").json(),
        json!([{"id": 1, "price": "$1", "quality": "ok"}])
    );
    let created = server.create("/api/todos", r#"{"userId": 1, "title": "d"}"#);
    assert_eq!(created["id"], 4, "id 3 was deleted, never to be reused");
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(journal_lines(&data), 0, "a clean stop compacts the journal");

    // After compaction the snapshot alone carries the state and the ids.
    let snapshot: Value =
        serde_json::from_slice(&fs::read(&data).expect("the snapshot")).expect("JSON");
    assert_eq!(snapshot["lastId"], json!({"widgets": 1, "todos": 4}));
    assert_eq!(snapshot["todos"].as_array().map(Vec::len), Some(3));
    let (child, server) = spawn_remote(&["--port", "0", "--data", data_arg]);
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "e"}"#)["id"],
        5
    );
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
}

#[test]
fn a_hand_written_fixture_seeds_the_store() {
    let dir = TempDir::new("fixture");
    let data = dir.join("fixture.json");
    fs::write(
        &data,
        r#"{"todos": [{"id": 7, "userId": 2, "title": "seeded"},
                      {"id": 3, "userId": 1, "title": "older", "completed": true}],
            "widgets": []}"#,
    )
    .expect("write the fixture");
    let server = TestServer::with_store(Store::open(100, &data).expect("load the fixture"));
    assert_eq!(
        server.get("/api/todos").json(),
        json!([
            {"id": 3, "userId": 1, "title": "older", "completed": true},
            {"id": 7, "userId": 2, "title": "seeded", "completed": false}
        ])
    );
    // New ids follow the highest id in the fixture.
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "new"}"#)["id"],
        8
    );
    assert_eq!(
        server.create("/api/widgets", r#"{"price": "1", "quality": "q"}"#)["id"],
        1
    );
}

#[test]
fn an_invalid_fixture_stops_start_up_and_is_left_alone() {
    let dir = TempDir::new("bad-fixture");
    let cases = [
        (
            r#"{"todos": [{"id": 1, "userId": 1, "title": "ok"}, {"id": 2, "userId": 1, "title": 5}]}"#,
            ["todos[1]", "title"],
        ),
        (
            r#"{"widgets": [{"id": 0, "price": "1", "quality": "q"}]}"#,
            ["widgets[0]", "id"],
        ),
        (
            r#"{"todos": [{"id": 1, "userId": 1, "title": "a"}, {"id": 1, "userId": 1, "title": "b"}]}"#,
            ["todos[1]", "id 1 appears twice"],
        ),
        (r#"{"todo": []}"#, ["unknown collection \"todo\"", "import"]),
        (r#"{"todos": [}"#, ["not valid JSON", "line 1"]),
    ];
    for (n, (fixture, expected)) in cases.iter().enumerate() {
        let data = dir.join(&format!("bad-{n}.json"));
        fs::write(&data, fixture).expect("write the fixture");
        let out = run(
            &["--port", "0", "--data", data.to_str().expect("UTF-8")],
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{fixture}: {stderr}");
        for part in expected {
            assert!(stderr.contains(part), "{fixture}: {stderr} lacks {part}");
        }
        assert_eq!(
            fs::read_to_string(&data).expect("read back"),
            *fixture,
            "the file is untouched"
        );
    }
}

/// A journal whose last line was cut short by a crash (never acknowledged).
#[test]
fn a_torn_last_journal_line_is_dropped() {
    let dir = TempDir::new("torn");
    let data = dir.join("data.json");
    let journal = dir.join("data.json.journal");
    let good = concat!(
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":1,"userId":1,"title":"a","completed":false}}"#,
        "\n",
        r#"{"seq":2,"op":"put","collection":"todos","item":{"id":2,"userId":1,"title":"b","completed":false}}"#,
        "\n",
    );
    for torn in [
        r#"{"seq":3,"op":"put","collection":"todos","item":{"id":3,"us"#,
        r#"{"seq":3,"op":"delete","collection":"todos","id":1}"#,
        "\0\0\0\0\0\0",
    ] {
        fs::write(&journal, format!("{good}{torn}")).expect("write the journal");
        let store = Store::open(100, &data).expect("a torn last line is no error");
        assert_eq!(
            store.all::<Todo>().iter().map(|t| t.id).collect::<Vec<_>>(),
            [1, 2],
            "{torn:?}"
        );
        assert_eq!(
            fs::read_to_string(&journal).expect("read"),
            good,
            "the torn line is cut from the file"
        );
        store.close();
        let _ = fs::remove_file(&data);
    }
}

#[test]
fn a_corrupt_record_before_the_last_stops_start_up() {
    let dir = TempDir::new("corrupt");
    let data = dir.join("data.json");
    let journal = dir.join("data.json.journal");
    let text = concat!(
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":1,"userId":1,"title":"a","completed":false}}"#,
        "\n",
        r#"{"seq":2,"op":"put","collection":"todos","item":{"id":2,"userId":1,"title":"#,
        "\n",
        r#"{"seq":3,"op":"delete","collection":"todos","id":1}"#,
        "\n",
    );
    fs::write(&journal, text).expect("write the journal");
    let err = Store::open(100, &data)
        .err()
        .expect("a corrupt middle record fails");
    assert!(err.contains("line 2"), "{err}");
    assert_eq!(fs::read_to_string(&journal).expect("read"), text);

    // A journal that does not follow on from the snapshot (a back-up of a
    // snapshot older than its journal) would silently lose the gap.
    fs::write(&data, r#"{"seq": 4, "todos": []}"#).expect("write the snapshot");
    let text = concat!(
        r#"{"seq":7,"op":"delete","collection":"todos","id":1}"#,
        "\n",
        r#"{"seq":8,"op":"delete","collection":"todos","id":2}"#,
        "\n",
    );
    fs::write(&journal, text).expect("write the journal");
    let err = Store::open(100, &data).err().expect("a gap fails");
    assert!(err.contains("5 to 6 are missing"), "{err}");
    fs::remove_file(&data).expect("remove the snapshot");

    // An invalid item is as bad as broken JSON.
    let text = concat!(
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":1,"userId":0,"title":"a"}}"#,
        "\n",
        r#"{"seq":2,"op":"delete","collection":"todos","id":1}"#,
        "\n",
    );
    fs::write(&journal, text).expect("write the journal");
    let err = Store::open(100, &data)
        .err()
        .expect("an invalid item fails");
    assert!(err.contains("line 1") && err.contains("userId"), "{err}");
}

#[test]
fn compaction_keeps_every_change() {
    let dir = TempDir::new("compact");
    let data = dir.join("data.json");
    let server = TestServer::with_store(Store::open_compacting_after(100, &data, 5).expect("open"));
    for n in 1..=12 {
        server.create(
            "/api/todos",
            &format!(r#"{{"userId": 1, "title": "t{n}"}}"#),
        );
    }
    assert_eq!(server.delete("/api/todos/12").status, 200);
    let patched = server.json("PUT", "/api/todos/1", r#"{"title": "first"}"#);
    assert_eq!(patched.status, 200);
    // The compaction thread runs after every 12 records or so (the item
    // count); wait until it has cut the journal.
    let deadline = Instant::now() + Duration::from_secs(10);
    while journal_lines(&data) >= 14 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(journal_lines(&data) < 14, "the journal was never compacted");
    let expected = server.get("/api/todos").json();
    drop(server);

    // Reopen from the files as they are, without a final compaction.
    let reopened = TestServer::with_store(Store::open(100, &data).expect("reopen"));
    assert_eq!(reopened.get("/api/todos").json(), expected);
    assert_eq!(expected.as_array().map(Vec::len), Some(11));
    assert_eq!(expected[0]["title"], "first");
    assert_eq!(
        reopened.create("/api/todos", r#"{"userId": 1, "title": "n"}"#)["id"],
        13
    );
}

/// Four acknowledged records, then one byte of the last changed, its newline
/// kept: a complete line that does not load is corruption, not a torn write
/// (a write in progress never reaches its newline), so start-up stops and
/// every file stays as it was.
#[test]
fn a_complete_last_line_that_does_not_load_stops_start_up() {
    let dir = TempDir::new("bad-last-line");
    let data = dir.join("data.json");
    let journal = dir.join("data.json.journal");
    let first = concat!(
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":1,"userId":1,"title":"a","completed":false}}"#,
        "\n",
        r#"{"seq":2,"op":"put","collection":"todos","item":{"id":2,"userId":1,"title":"b","completed":false}}"#,
        "\n",
        r#"{"seq":3,"op":"put","collection":"todos","item":{"id":3,"userId":1,"title":"c","completed":false}}"#,
        "\n",
    );
    for last in [
        // Not JSON any more: 'f' of false became 'g'.
        r#"{"seq":4,"op":"put","collection":"todos","item":{"id":4,"userId":1,"title":"d","completed":galse}}"#,
        // JSON, but an invalid item: userId 1 became 0.
        r#"{"seq":4,"op":"put","collection":"todos","item":{"id":4,"userId":0,"title":"d","completed":false}}"#,
        // A record number that does not follow on.
        r#"{"seq":5,"op":"put","collection":"todos","item":{"id":4,"userId":1,"title":"d","completed":false}}"#,
    ] {
        let text = format!("{first}{last}\n");
        fs::write(&journal, &text).expect("write the journal");
        let stderr = refused_start(&data, &[]);
        assert!(stderr.contains("line 4"), "{last}: {stderr}");
        assert_eq!(fs::read_to_string(&journal).expect("read"), text, "{last}");
        assert!(!data.exists(), "{last}: a failed start creates no file");
    }
}

/// Ids are 1 to 2^53-1. Once a collection has handed out the last one, a
/// create is refused with 507 and nothing is stored, in memory or on disk;
/// the other collection goes on.
#[test]
fn a_collection_out_of_ids_refuses_creates_and_stores_nothing() {
    let dir = TempDir::new("ids-run-out");
    let data = dir.join("data.json");
    fs::write(
        &data,
        r#"{"todos": [{"id": 9007199254740990, "userId": 1, "title": "next to last"}]}"#,
    )
    .expect("write the fixture");
    let server = TestServer::with_store(Store::open(100, &data).expect("load"));
    let last = server.create("/api/todos", r#"{"userId": 1, "title": "last"}"#);
    assert_eq!(last["id"], 9_007_199_254_740_991_u64);
    let refused = server.json(
        "POST",
        "/api/todos",
        r#"{"userId": 1, "title": "one more"}"#,
    );
    let detail = problem(&refused, 507)["detail"].to_string();
    assert!(detail.contains("no ids left"), "{detail}");
    let listed = server.get("/api/todos");
    assert_eq!(listed.header("X-Total-Count"), Some("2"));
    assert_eq!(listed.json().as_array().map(Vec::len), Some(2));
    assert_eq!(
        server.create("/api/widgets", r#"{"price": "1", "quality": "q"}"#)["id"],
        1
    );
    drop(server);

    // What was acknowledged is all there after a restart, and still no id
    // is left.
    let server = TestServer::with_store(Store::open(100, &data).expect("reload"));
    let ids: Vec<Value> = server
        .get("/api/todos")
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|todo| todo["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            json!(9_007_199_254_740_990_u64),
            json!(9_007_199_254_740_991_u64)
        ]
    );
    problem(
        &server.json("POST", "/api/todos", r#"{"userId": 1, "title": "x"}"#),
        507,
    );
    drop(server);

    // A fixture whose last id is the last one loads, and refuses creates.
    fs::remove_file(dir.join("data.json.journal")).expect("remove the journal");
    fs::write(&data, r#"{"lastId": {"todos": 9007199254740991}}"#).expect("write");
    let server = TestServer::with_store(Store::open(100, &data).expect("load"));
    problem(
        &server.json("POST", "/api/todos", r#"{"userId": 1, "title": "x"}"#),
        507,
    );
    assert_eq!(server.get("/api/todos").json(), json!([]));
}

/// `lastId` values are ids (0 to 2^53-1) and `seq`, the journal's record
/// number, is 0 to 2^53-1 too: anything else stops start-up.
#[test]
fn ids_and_record_numbers_out_of_range_stop_start_up() {
    let dir = TempDir::new("ranges");
    let data = dir.join("data.json");
    let cases = [
        (
            r#"{"lastId": {"todos": 18446744073709551615}}"#,
            "lastId.todos",
        ),
        (
            r#"{"lastId": {"widgets": 9007199254740992}}"#,
            "lastId.widgets",
        ),
        (r#"{"lastId": {"todos": -1}}"#, "lastId.todos"),
        (r#"{"seq": 18446744073709551615}"#, "seq"),
        (r#"{"seq": 9007199254740992, "todos": []}"#, "seq"),
    ];
    for (fixture, name) in cases {
        fs::write(&data, fixture).expect("write the fixture");
        let stderr = refused_start(&data, &[]);
        assert!(stderr.contains(name), "{fixture}: {stderr}");
        assert!(stderr.contains("9007199254740991"), "{fixture}: {stderr}");
        assert_eq!(fs::read_to_string(&data).expect("read"), fixture);
    }

    // A journal record numbered past the range.
    fs::write(&data, r#"{"seq": 9007199254740991}"#).expect("write the snapshot");
    let journal = dir.join("data.json.journal");
    let record = concat!(
        r#"{"seq":9007199254740992,"op":"delete","collection":"todos","id":1}"#,
        "\n"
    );
    fs::write(&journal, record).expect("write the journal");
    let stderr = refused_start(&data, &[]);
    assert!(stderr.contains("line 1"), "{stderr}");
    assert_eq!(fs::read_to_string(&journal).expect("read"), record);
}

/// With the last record number used, a write is refused (507) before
/// anything changes, so that the journal never holds a record the loader
/// would refuse.
#[test]
fn a_journal_out_of_record_numbers_refuses_writes() {
    let dir = TempDir::new("seq-run-out");
    let data = dir.join("data.json");
    fs::write(
        &data,
        r#"{"seq": 9007199254740991, "todos": [{"id": 1, "userId": 1, "title": "a"}]}"#,
    )
    .expect("write the fixture");
    let server = TestServer::with_store(Store::open(100, &data).expect("load"));
    let before = server.get("/api/todos").json();
    for (method, path, body) in [
        ("POST", "/api/todos", r#"{"userId": 1, "title": "b"}"#),
        ("PATCH", "/api/todos/1", r#"{"completed": true}"#),
        ("DELETE", "/api/todos/1", ""),
    ] {
        let refused = server.json(method, path, body);
        let detail = problem(&refused, 507)["detail"].to_string();
        assert!(detail.contains("record numbers"), "{method}: {detail}");
    }
    assert_eq!(server.get("/api/todos").json(), before);
    drop(server);
    let server = TestServer::with_store(Store::open(100, &data).expect("reload"));
    assert_eq!(server.get("/api/todos").json(), before);
}

/// A name given twice in a data file (at the top, in `lastId`, in an item,
/// in a journal record) is ambiguous: refused, not "the last one wins".
#[test]
fn duplicate_names_in_the_data_files_stop_start_up() {
    let dir = TempDir::new("duplicates");
    let data = dir.join("data.json");
    let todo = r#"{"id": 1, "userId": 1, "title": "a"}"#;
    let cases = [
        (
            format!(r#"{{"todos": [{todo}], "todos": []}}"#),
            "\"todos\"",
        ),
        (
            format!(r#"{{"seq": 1, "todos": [{todo}], "seq": 0}}"#),
            "\"seq\"",
        ),
        (
            r#"{"lastId": {"todos": 9, "todos": 1}}"#.to_string(),
            "lastId.todos",
        ),
        (
            r#"{"lastId": {"todos": 9}, "lastId": {}}"#.to_string(),
            "\"lastId\"",
        ),
        (
            r#"{"todos": [{"id": 1, "userId": 1, "title": "a", "title": "b"}]}"#.to_string(),
            "title",
        ),
        (
            r#"{"widgets": [{"id": 1, "id": 2, "price": "1", "quality": "q"}]}"#.to_string(),
            "id",
        ),
    ];
    for (fixture, name) in &cases {
        fs::write(&data, fixture).expect("write the fixture");
        let stderr = refused_start(&data, &[]);
        assert!(
            stderr.contains(name) && stderr.contains("more than once"),
            "{fixture}: {stderr}"
        );
        assert_eq!(fs::read_to_string(&data).expect("read"), *fixture);
    }

    fs::remove_file(&data).expect("remove the snapshot");
    let journal = dir.join("data.json.journal");
    for record in [
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":1,"userId":1,"title":"a","title":"b"}}"#,
        r#"{"seq":1,"op":"put","collection":"todos","op":"delete","id":1,"item":{"id":1,"userId":1,"title":"a"}}"#,
    ] {
        let text = format!("{record}\n");
        fs::write(&journal, &text).expect("write the journal");
        let stderr = refused_start(&data, &[]);
        // serde's own words for a record's names, ours for an item's.
        assert!(
            stderr.contains("line 1")
                && (stderr.contains("more than once") || stderr.contains("duplicate field `op`")),
            "{record}: {stderr}"
        );
        assert_eq!(fs::read_to_string(&journal).expect("read"), text);
        assert!(!data.exists());
    }
}

/// A data file holding more items than `--max-items` allows would load and
/// then refuse every create: refused at start-up instead, saying how many.
#[test]
fn more_items_than_max_items_stop_start_up() {
    let dir = TempDir::new("over-max-items");
    let data = dir.join("data.json");
    let todos: Vec<String> = (1..=5)
        .map(|id| format!(r#"{{"id": {id}, "userId": 1, "title": "t{id}"}}"#))
        .collect();
    let fixture = format!(r#"{{"todos": [{}]}}"#, todos.join(",\n"));
    fs::write(&data, &fixture).expect("write the fixture");
    let stderr = refused_start(&data, &["--max-items", "3"]);
    assert!(
        stderr.contains("5 todos") && stderr.contains("--max-items 3"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&data).expect("read"), fixture);

    // The same count, reached through the journal.
    let fixture = format!(r#"{{"todos": [{}]}}"#, todos[..3].join(",\n"));
    fs::write(&data, &fixture).expect("write the fixture");
    let journal = dir.join("data.json.journal");
    let records = concat!(
        r#"{"seq":1,"op":"put","collection":"todos","item":{"id":4,"userId":1,"title":"d","completed":false}}"#,
        "\n",
        r#"{"seq":2,"op":"put","collection":"todos","item":{"id":5,"userId":1,"title":"e","completed":false}}"#,
        "\n",
    );
    fs::write(&journal, records).expect("write the journal");
    let stderr = refused_start(&data, &["--max-items", "4"]);
    assert!(
        stderr.contains("5 todos") && stderr.contains("--max-items 4"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&journal).expect("read"), records);
    // With room enough, the same files load.
    let store = Store::open(5, &data).expect("load with --max-items 5");
    assert_eq!(store.all::<Todo>().len(), 5);
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A compaction replaces both files by renaming new ones over them; the
/// new ones keep the old ones' modes (a private file stays private, and a
/// group-writable one is not narrowed by the umask).
#[test]
fn rewritten_data_files_keep_their_mode() {
    let dir = TempDir::new("modes");
    let data = dir.join("data.json");
    let journal = dir.join("data.json.journal");
    Store::open(100, &data).expect("create the files").close();
    set_mode(&data, 0o660);
    set_mode(&journal, 0o600);

    let server = TestServer::with_store(Store::open(100, &data).expect("open"));
    server.create("/api/todos", r#"{"userId": 1, "title": "a"}"#);
    assert_eq!(journal_lines(&data), 1);
    server.store().close();
    assert_eq!(journal_lines(&data), 0, "the files were rewritten");
    assert_eq!(mode(&data), 0o660);
    assert_eq!(mode(&journal), 0o600);
}

/// `--data` naming a symbolic link: the server reads and rewrites the file
/// the link points to, and the link stays. The journal, `PATH.journal`,
/// may be a link too.
#[test]
fn data_files_that_are_symbolic_links_are_followed() {
    let dir = TempDir::new("symlinks");
    fs::create_dir(dir.join("real")).expect("mkdir");
    let snapshot = dir.join("real/data.json");
    fs::write(
        &snapshot,
        r#"{"todos": [{"id": 1, "userId": 1, "title": "a"}]}"#,
    )
    .expect("write the fixture");
    let link = dir.join("link.json");
    let journal_link = dir.join("link.json.journal");
    std::os::unix::fs::symlink("real/data.json", &link).expect("link");
    // Dangling until the server creates the journal where it points.
    std::os::unix::fs::symlink("real/journal", &journal_link).expect("link");

    let server = TestServer::with_store(Store::open(100, &link).expect("open"));
    server.create("/api/todos", r#"{"userId": 1, "title": "b"}"#);
    assert_eq!(journal_lines(&link), 1);
    server.store().close();
    drop(server);

    for (path, target) in [(&link, "real/data.json"), (&journal_link, "real/journal")] {
        assert_eq!(
            fs::read_link(path).ok(),
            Some(std::path::PathBuf::from(target)),
            "{} is still a link to {target}",
            path.display()
        );
    }
    let written: Value =
        serde_json::from_slice(&fs::read(&snapshot).expect("the target")).expect("JSON");
    assert_eq!(written["todos"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        fs::read(dir.join("real/journal")).expect("the journal"),
        b""
    );
    let mut names: Vec<_> = fs::read_dir(dir.join("real"))
        .expect("list")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["data.json", "journal"], "no temporary file is left");

    let server = TestServer::with_store(Store::open(100, &link).expect("reopen"));
    assert_eq!(
        server.get("/api/todos").json().as_array().map(Vec::len),
        Some(2)
    );

    // A link that leads back to itself is refused at start-up.
    let looped = dir.join("loop.json");
    std::os::unix::fs::symlink("loop.json", &looped).expect("link");
    let err = Store::open(100, &looped).err().expect("a loop fails");
    assert!(
        err.contains("loop.json") && err.contains("symbolic links"),
        "{err}"
    );
}

/// A journal that cannot be written (here a link to `/dev/full`, where
/// every write fails with ENOSPC, as on a full disk): the write gets 503 and
/// changes nothing, in memory either, whatever kind of write it was; writes
/// stay refused; and nothing of it comes back after a restart. (A unit test
/// in `src/store_tests.rs` covers several writes sharing the failed flush.)
#[test]
fn a_failed_journal_write_changes_nothing() {
    assert!(
        fs::metadata("/dev/full").is_ok(),
        "this test needs /dev/full"
    );
    let dir = TempDir::new("disk-full");
    let data = dir.join("data.json");
    let journal = dir.join("data.json.journal");
    let fixture = r#"{"todos": [{"id": 1, "userId": 1, "title": "a"},
                                {"id": 2, "userId": 1, "title": "b"}],
                      "widgets": [{"id": 1, "price": "$1", "quality": "ok"}]}"#;
    let state = |server: &TestServer| {
        let todos = server.get("/api/todos");
        let widgets = server.get("/api/widgets");
        (
            todos.json(),
            todos.header("X-Total-Count").map(str::to_string),
            widgets.json(),
            widgets.header("X-Total-Count").map(str::to_string),
        )
    };
    let writes = [
        ("POST", "/api/todos", r#"{"userId": 2, "title": "new"}"#),
        ("PATCH", "/api/todos/1", r#"{"completed": true}"#),
        ("PUT", "/api/todos/2", r#"{"title": "changed"}"#),
        ("DELETE", "/api/todos/2", ""),
        ("DELETE", "/api/todos", ""),
        (
            "POST",
            "/api/widgets",
            r#"{"price": "$2", "quality": "new"}"#,
        ),
        ("DELETE", "/api/widgets/1", ""),
    ];
    for (method, path, body) in writes {
        fs::write(&data, fixture).expect("write the fixture");
        let _ = fs::remove_file(&journal);
        std::os::unix::fs::symlink("/dev/full", &journal).expect("link");
        let open = || {
            let store = Store::open(100, &data).expect("open");
            let options = widgets_todos::app::Options {
                allow_reset: true,
                ..Default::default()
            };
            TestServer::with_app(widgets_todos::app::App::with_options(store, options))
        };

        let server = open();
        let before = state(&server);
        assert_eq!(before.1.as_deref(), Some("2"));
        problem(&server.json(method, path, body), 503);
        assert_eq!(state(&server), before, "{method} {path} changed the store");
        assert_eq!(server.get("/api/todos/3").status, 404);
        // Writes stay refused.
        problem(
            &server.json("POST", "/api/todos", r#"{"userId": 1, "title": "x"}"#),
            503,
        );
        assert_eq!(state(&server), before);
        drop(server);

        // Nothing of it comes back, and the next id is the one it would
        // have been.
        fs::remove_file(&journal).expect("remove the link");
        let server = open();
        assert_eq!(
            state(&server),
            before,
            "after {method} {path} and a restart"
        );
        assert_eq!(
            server.create("/api/todos", r#"{"userId": 1, "title": "d"}"#)["id"],
            3
        );
    }
}

/// A stored item that is no JSON object (the loader's fast way hands it to
/// the general way, which refuses it): start-up stops, naming the item and
/// the shape it must have, and the file is left as it was.
#[test]
fn an_item_that_is_not_an_object_stops_start_up() {
    let dir = TempDir::new("not-an-object");
    let data = dir.join("data.json");
    for (fixture, name) in [
        (r#"{"todos": [1]}"#, "todos[0]: must be an object, like"),
        (
            r#"{"widgets": [{"id": 1, "price": "1", "quality": "q"}, "w"]}"#,
            "widgets[1]: must be an object, like",
        ),
    ] {
        fs::write(&data, fixture).expect("write the fixture");
        let stderr = refused_start(&data, &[]);
        assert!(stderr.contains(name), "{fixture}: {stderr}");
        assert_eq!(fs::read_to_string(&data).expect("read"), fixture);
    }
}

/// A journal longer than the compaction threshold at start-up (left by
/// runs that each ended by a crash before compacting) is compacted soon
/// after the start, without waiting for as many new writes: the count
/// toward compaction starts from what the journal holds.
#[test]
fn a_journal_found_long_at_start_up_is_compacted() {
    let dir = TempDir::new("long-journal");
    let data = dir.join("data.json");
    let records: String = (1..=12)
        .map(|n| {
            format!(
                "{{\"seq\":{n},\"op\":\"put\",\"collection\":\"todos\",\
                 \"item\":{{\"id\":{n},\"userId\":1,\"title\":\"t{n}\",\"completed\":false}}}}\n"
            )
        })
        .collect();
    fs::write(widgets_todos::store::journal_of(&data), records).expect("write the journal");
    let store = Store::open_compacting_after(100, &data, 5).expect("open");
    let deadline = Instant::now() + Duration::from_secs(10);
    while journal_lines(&data) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        journal_lines(&data),
        0,
        "the long journal was not compacted"
    );
    assert_eq!(store.count::<Todo>(), 12);
    drop(store);
    let reopened = Store::open(100, &data).expect("reopen");
    assert_eq!(reopened.count::<Todo>(), 12);
    reopened.close();
}
