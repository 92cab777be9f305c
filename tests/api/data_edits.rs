//! The data files changed by another program while the server runs: an
//! editor's save, a sync tool, a back-up restored, `rm`, `truncate`.
//! Never silent, and never a lost acknowledged write: the change is logged
//! within about a second, and the server writes the files again from what
//! it holds, so a `kill -9` after it loses nothing. With `--watch` (the
//! json-server habit), an edit of the snapshot that loads is served
//! instead; one that does not is logged with why, and changes nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use widgets_todos::model::Todo;
use widgets_todos::store::Store;

use crate::cli::{kill_9, spawn_remote};
use crate::support::{Remote, TempDir};

/// A server's log, line by line, as it comes.
struct Log(mpsc::Receiver<String>);

impl Log {
    fn of(child: &mut Child) -> Log {
        let stderr = child.stderr.take().unwrap();
        let (lines, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Log(log)
    }

    /// The next line that says every one of `said`, within 10 s.
    fn wait_for(&self, said: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.recv_timeout(left) {
                Ok(line) if said.iter().all(|s| line.contains(s)) => return line,
                Ok(_) => {}
                Err(_) => panic!("no log line saying {said:?} within 10 s"),
            }
        }
    }
}

/// A subscriber of `/api/events`, raw: the bytes as they come.
struct Events(std::net::TcpStream);

impl Events {
    fn subscribe(server: &Remote) -> Events {
        let mut stream = server.connect();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET /api/events HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n")
            .unwrap();
        Events(stream)
    }

    /// Reads until `said` has come `times` times, within 10 s; the text.
    fn until(&mut self, said: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut text = String::new();
        let mut buf = [0u8; 4096];
        while text.matches(said).count() < times {
            assert!(
                Instant::now() < deadline,
                "{said:?} not {times} times: {text}"
            );
            match self.0.read(&mut buf) {
                Ok(0) | Err(_) => panic!("the stream ended: {text}"),
                Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
        text
    }
}

/// `count` acknowledged creates, titled from `first` on.
fn create(server: &Remote, first: usize, count: usize) {
    for n in first..first + count {
        let body = format!(r#"{{"userId": 1, "title": "t{n}"}}"#);
        assert_eq!(server.json("POST", "/api/todos", &body).status, 201);
    }
}

/// Titles of the todos the files at `data` load to.
fn titles_after_restart(data: &Path) -> Vec<String> {
    let store = Store::open(100, data).expect("the files load");
    let titles = store
        .all::<Todo>()
        .iter()
        .map(|t| t.title.to_string())
        .collect();
    store.close();
    titles
}

/// 20 acknowledged creates, `change` done to the files by "another
/// program", 20 more, the server's warning naming `named`, `kill -9`:
/// all 40 load.
fn survives(name: &str, named: &str, change: impl FnOnce(&Path)) {
    let dir = TempDir::new(name);
    let data = dir.join("db.json");
    let (mut child, server) = spawn_remote(&["--port", "0", "--data", data.to_str().unwrap()]);
    let log = Log::of(&mut child);
    create(&server, 0, 20);
    change(&data);
    create(&server, 20, 20);
    let line = log.wait_for(&[named, "by another program"]);
    assert!(line.contains("WARN"), "{line}");
    assert!(
        line.contains("every acknowledged write is in the data files again"),
        "{line}"
    );
    kill_9(child);
    let titles = titles_after_restart(&data);
    let expected: Vec<String> = (0..40).map(|n| format!("t{n}")).collect();
    assert_eq!(titles, expected, "{name}");
}

fn journal(data: &Path) -> std::path::PathBuf {
    widgets_todos::store::journal_of(data)
}

#[test]
fn a_journal_replaced_by_copy_and_rename_loses_no_acknowledged_write() {
    survives("journal-replaced", "db.json.journal was replaced", |data| {
        let copy = data.with_file_name("copy");
        std::fs::copy(journal(data), &copy).unwrap();
        std::fs::rename(&copy, journal(data)).unwrap();
    });
}

#[test]
fn a_journal_deleted_loses_no_acknowledged_write() {
    survives("journal-deleted", "db.json.journal was deleted", |data| {
        std::fs::remove_file(journal(data)).unwrap();
    });
}

#[test]
fn a_journal_truncated_loses_no_acknowledged_write() {
    survives("journal-truncated", "db.json.journal was cut", |data| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(journal(data))
            .unwrap();
        let len = file.metadata().unwrap().len();
        file.set_len(len / 2).unwrap();
    });
}

#[test]
fn a_snapshot_deleted_is_logged_and_written_again() {
    survives("snapshot-deleted", "db.json was deleted", |data| {
        std::fs::remove_file(data).unwrap();
    });
}

#[test]
fn without_watch_an_edit_of_the_data_file_is_logged_and_written_over() {
    let dir = TempDir::new("edited");
    let data = dir.join("db.json");
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/seed.json");
    std::fs::copy(seed, &data).unwrap();
    let (mut child, server) = spawn_remote(&["--port", "0", "--data", data.to_str().unwrap()]);
    let log = Log::of(&mut child);

    let edited = std::fs::read_to_string(&data)
        .unwrap()
        .replace("Buy milk", "Buy oat milk");
    std::fs::write(&data, &edited).unwrap();
    let line = log.wait_for(&["was changed by another program while the server ran"]);
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("db.json"), "{line}");
    assert!(line.contains("so that change is lost"), "{line}");
    assert!(line.contains("--watch"), "{line}");

    // The server goes on with what it loaded, and its data replaced the edit.
    assert!(server.get("/api/todos/1").text().contains("\"Buy milk\""));
    let after = std::fs::read_to_string(&data).unwrap();
    assert!(
        after.contains("\"Buy milk\"") && !after.contains("oat"),
        "{after}"
    );
    kill_9(child);
    assert!(titles_after_restart(&data).contains(&"Buy milk".to_string()));
}

/// json-server's `--watch db.json`: a hand edit (a todo added, one
/// changed) is served; a broken one is logged and changes nothing; a
/// `kill -9` after both keeps every write acknowledged through the API and
/// the edit loaded.
#[test]
fn with_watch_an_edit_is_loaded_and_a_broken_one_changes_nothing() {
    let dir = TempDir::new("watched");
    let data = dir.join("db.json");
    std::fs::write(
        &data,
        r#"{"todos": [{"id": 1, "userId": 1, "title": "Buy milk", "completed": false}]}"#,
    )
    .unwrap();
    let args = ["--port", "0", "--watch", "--data", data.to_str().unwrap()];
    let (mut child, server) = spawn_remote(&args);
    let log = Log::of(&mut child);
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "api 1"}"#)["id"],
        2
    );

    // The file shows what the server holds within about a second, as
    // json-server's does: edit that, as an editor saves (write and rename).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&data).unwrap().contains("api 1") {
        assert!(
            Instant::now() < deadline,
            "the API's write never reached the file"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&data).unwrap();
    let mut db: serde_json::Value = serde_json::from_str(&text).unwrap();
    let todos = db["todos"].as_array_mut().unwrap();
    todos[0]["title"] = "Buy oat milk".into();
    todos.push(serde_json::json!({"id": 10, "userId": 2, "title": "by hand"}));
    let mut events = Events::subscribe(&server);
    events.until("\r\n\r\n", 1);
    let saved = dir.join("db.json.save");
    std::fs::write(&saved, db.to_string()).unwrap();
    std::fs::rename(&saved, &data).unwrap();
    let line = log.wait_for(&["db.json", "loaded"]);
    // Subscribers are told to read both collections again.
    let told = events.until("event: reset", 2);
    assert!(told.contains(r#""collection":"todos""#), "{told}");
    assert!(told.contains(r#""collection":"widgets""#), "{told}");
    assert!(
        line.contains("2 todos") || line.contains("3 todos"),
        "{line}"
    );
    assert_eq!(server.get("/api/todos/10").status, 200);
    assert!(server.get("/api/todos/1").text().contains("Buy oat milk"));
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "api 2"}"#)["id"],
        11
    );

    // Not JSON: logged with why; the data served stays as it was.
    std::fs::write(&data, "{\"todos\": [").unwrap();
    let line = log.wait_for(&["db.json", "not valid JSON"]);
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("the data served stays as it was"), "{line}");
    assert_eq!(server.get("/api/todos/10").status, 200);
    assert_eq!(
        server.create("/api/todos", r#"{"userId": 1, "title": "api 3"}"#)["id"],
        12
    );
    let rejected = std::fs::read_to_string(dir.join("db.json.rejected")).unwrap();
    assert_eq!(rejected, "{\"todos\": [");

    kill_9(child);
    let titles = titles_after_restart(&data);
    assert_eq!(
        titles,
        ["Buy oat milk", "api 1", "by hand", "api 2", "api 3"]
    );
}
