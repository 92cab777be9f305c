//! The data file edited by another program while the server runs (the
//! json-server `--watch` habit): never lost silently. The edit is logged
//! once, soon, with what will happen to it; the snapshot that replaces it
//! says so again.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::cli::spawn_remote;
use crate::support::TempDir;

#[test]
fn an_edit_of_the_data_file_while_the_server_runs_is_logged_then_replaced() {
    let dir = TempDir::new("edited");
    let data = dir.join("db.json");
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/seed.json");
    std::fs::copy(seed, &data).unwrap();
    let (mut child, server) = spawn_remote(&["--port", "0", "--data", data.to_str().unwrap()]);

    // The log, line by line, as it comes.
    let stderr = child.stderr.take().unwrap();
    let (lines, log) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |said: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match log.recv_timeout(left) {
                Ok(line) if line.contains(said) => return line,
                Ok(_) => {}
                Err(_) => panic!("no log line saying {said:?} within 10 s"),
            }
        }
    };

    let edited = std::fs::read_to_string(&data)
        .unwrap()
        .replace("Buy milk", "Buy oat milk");
    std::fs::write(&data, &edited).unwrap();
    let line = wait_for("was changed by another program while the server runs");
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("db.json"), "{line}");
    assert!(line.contains("so that change will be lost"), "{line}");
    assert!(
        line.contains("stop the server, edit the file, and start it again"),
        "{line}"
    );

    // The server goes on with what it loaded, and its data replaces the
    // edit at the stop, saying so.
    assert!(server.get("/api/todos/1").text().contains("\"Buy milk\""));
    let pid = child.id().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(signalled.success());
    let line = wait_for("is lost: replaced with the server's data");
    assert!(
        line.contains("the change another program made to it while the server ran"),
        "{line}"
    );
    drop(log);
    let status = crate::cli::wait_with_timeout(&mut child, Duration::from_secs(10));
    reader.join().unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let after = std::fs::read_to_string(&data).unwrap();
    assert!(
        after.contains("\"Buy milk\"") && !after.contains("oat"),
        "{after}"
    );
}
