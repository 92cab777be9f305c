//! json-server 0.17's command line, run as it is with the binary's name
//! changed: its spellings of the options this server shares (`-p`, `-H`,
//! `-w`, `-d`, `--ro`, `--nc`, `-q`, `-c`), the data file as the last
//! argument, and `json-server.json`; and what `--read-only`, `--delay`,
//! `--quiet` and an address of every interface do.

use std::time::{Duration, Instant};

use crate::cli::{get, spawn_in, stop_with};
use crate::support::{Remote, TempDir, TestServer, config, problem};

/// A json-server `db.json` of todos, as its README's example keeps them.
const DB: &str = r#"{
  "todos": [
    { "id": 1, "userId": 1, "title": "Buy milk", "completed": false },
    { "id": 2, "userId": 1, "title": "Walk the dog", "completed": true }
  ]
}"#;

/// A directory holding the json-server `db.json` of [`DB`].
fn with_db(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    std::fs::write(dir.join("db.json"), DB).unwrap();
    dir
}

/// json-server's README: `json-server --watch db.json --port 3004`, and
/// `-p 3000` with the file last (here on port 0: tests use no fixed
/// port); with its other flags of the same meaning too.
#[test]
fn a_json_server_command_line_runs_as_it_is() {
    let dir = with_db("json-server-cli");
    for args in [
        &["--watch", "db.json", "--port", "0"][..],
        &["-p", "0", "db.json"],
        &[
            "-w",
            "-H",
            "127.0.0.1",
            "-p=0",
            "-d",
            "0",
            "--nc",
            "-q",
            "db.json",
        ],
        &[
            "--host",
            "127.0.0.1",
            "--no-cors",
            "--quiet",
            "--read-only",
            "-p",
            "0",
            "db.json",
        ],
    ] {
        let (child, addr) = spawn_in(&dir.0, args, &[]);
        let todos = get(&addr, "/api/todos");
        assert!(todos.starts_with("HTTP/1.1 200"), "{args:?}: {todos}");
        assert!(
            todos.contains("\"title\":\"Walk the dog\""),
            "{args:?}: {todos}"
        );
        let (code, log) = stop_with(child, "-TERM");
        assert_eq!(code, Some(0), "{args:?}: {log}");
    }
}

/// `-c json-server.json` with `{"port": P, "watch": true}` serves on P;
/// a flag wins over the file.
#[test]
fn a_json_server_config_file_sets_the_port() {
    let dir = with_db("json-server-config");
    // A port free a moment ago (the file must name one; 0 would prove
    // nothing against the default).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let file = format!(r#"{{"port": {port}, "watch": true, "delay": 0, "readOnly": false}}"#);
    std::fs::write(dir.join("json-server.json"), file).unwrap();
    let (child, addr) = spawn_in(&dir.0, &["-c", "json-server.json", "db.json"], &[]);
    assert_eq!(addr, format!("127.0.0.1:{port}"));
    assert!(get(&addr, "/api/todos/1").contains("Buy milk"));
    stop_with(child, "-TERM");

    let (child, addr) = spawn_in(&dir.0, &["--config", "json-server.json", "-p", "0"], &[]);
    assert_ne!(addr, format!("127.0.0.1:{port}"), "the flag wins");
    stop_with(child, "-TERM");
}

/// A key of json-server.json that cannot apply here, an unknown key, a
/// bad value, a file that is no object: exit 2 and one line each.
#[test]
fn a_config_file_the_server_cannot_follow_is_refused_in_one_line() {
    let dir = TempDir::new("json-server-config-bad");
    for (text, said) in [
        (
            r#"{"port": 0, "routes": "routes.json"}"#,
            "\"routes\" does not apply here: there are no custom routes",
        ),
        (r#"{"static": "./public"}"#, "there are no static files"),
        (r#"{"foreignKeySuffix": "Id"}"#, "there are no relations"),
        (
            r#"{"prot": 3000}"#,
            "unknown key \"prot\": did you mean \"port\"?",
        ),
        (r#"{"port": "abc"}"#, "invalid value 'abc' for \"port\" in"),
        (
            r#"{"readOnly": "yes"}"#,
            "the value of \"readOnly\" must be true or false",
        ),
        (r#"[3000]"#, "not a JSON object of options"),
    ] {
        let file = dir.join("json-server.json");
        std::fs::write(&file, text).unwrap();
        let out = crate::cli::run(&["-c", file.to_str().unwrap()], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(said), "{text}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let out = crate::cli::run(&["-c", "/nonexistent/json-server.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read it"));
    // Never a device or a directory, which would block or never end.
    for path in ["/dev/zero", "/tmp"] {
        let out = crate::cli::run(&["-c", path], &[]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not a regular file"), "{path}: {stderr}");
    }
}

/// `--ro`: every read is served; every write is 405, whose `Allow` lists
/// the reads, with a problem saying why; nothing changes.
#[test]
fn read_only_serves_reads_and_refuses_writes() {
    let server = TestServer::with_config(widgets_todos::config::Config {
        read_only: true,
        ..config()
    });
    assert_eq!(server.get("/api/todos").status, 200);
    assert_eq!(server.get("/api/widgets/1").status, 404);
    let writes = [
        (
            "POST",
            "/api/todos",
            r#"{"userId": 1, "title": "Buy milk"}"#,
        ),
        (
            "POST",
            "/api/widgets",
            r#"{"price": "$1", "quality": "good"}"#,
        ),
        ("PUT", "/api/todos/1", r#"{"title": "x"}"#),
        ("PATCH", "/api/widgets/1", r#"{"price": "$2"}"#),
        ("DELETE", "/api/todos/1", ""),
        ("DELETE", "/api/todos", ""),
    ];
    for (method, path, body) in writes {
        let response = server.json(method, path, body);
        let problem = problem(&response, 405);
        assert_eq!(
            response.header("Allow"),
            Some("GET, HEAD, OPTIONS"),
            "{method} {path}"
        );
        let hint = problem["hint"].as_str().unwrap_or("");
        assert!(hint.contains("--read-only"), "{method} {path}: {problem}");
    }
    let options = server.send("OPTIONS", "/api/todos", &[], b"");
    assert_eq!(options.header("Allow"), Some("GET, HEAD, OPTIONS"));
    assert_eq!(server.get("/api/todos").text(), "[]");
    let document = server.get("/api/openapi.json").json();
    assert!(document["paths"]["/api/todos"].get("post").is_none());
}

/// `-d 200`: every /api response is held at least 200 ms (a lower bound,
/// which a loaded machine cannot make fail).
#[test]
fn delay_holds_each_api_response() {
    let dir = with_db("json-server-delay");
    let (child, addr) = spawn_in(&dir.0, &["-d", "200", "-p", "0", "db.json"], &[]);
    for path in ["/api/todos", "/api/todos/1"] {
        let started = Instant::now();
        assert!(get(&addr, path).starts_with("HTTP/1.1 200"));
        assert!(started.elapsed() >= Duration::from_millis(200), "{path}");
    }
    stop_with(child, "-TERM");
}

/// `-q`: no access line, where the same requests without it log one each.
#[test]
fn quiet_writes_no_access_lines() {
    for (quiet, lines) in [(true, 0), (false, 2)] {
        let mut args = vec!["-p", "0"];
        if quiet {
            args.push("-q");
        }
        let (child, addr) = crate::cli::spawn(&args, &[]);
        let remote = Remote(addr.parse().unwrap());
        assert_eq!(remote.get("/api/todos").status, 200);
        assert_eq!(remote.get("/nowhere").status, 404);
        let (code, log) = stop_with(child, "-TERM");
        assert_eq!(code, Some(0), "{log}");
        let access = log
            .lines()
            .filter(|l| l.contains(" GET /api/todos ") || l.contains(" GET /nowhere "))
            .count();
        assert_eq!(access, lines, "quiet {quiet}: {log}");
        assert!(log.contains("stopped"), "other lines stay: {log}");
    }
}

/// `--host 0.0.0.0`: the summary gives a URL a browser on this machine
/// opens, and says that every interface listens.
#[test]
fn every_interface_is_shown_as_a_url_a_browser_opens() {
    let (child, addr) = crate::cli::spawn(&["--host", "0.0.0.0", "-p", "0"], &[]);
    let port = addr.rsplit(':').next().unwrap().to_string();
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let first = log.lines().next().unwrap_or("");
    assert!(
        first.contains(&format!("the API is at http://127.0.0.1:{port}/api ")),
        "{log}"
    );
    assert!(first.contains("listening on all interfaces"), "{log}");
    assert!(!log.contains("http://0.0.0.0"), "{log}");
}

/// json-server serves every collection of its file: `/posts`, `POST
/// /api/posts` get a 404 whose hint names the two collections here.
#[test]
fn another_collection_gets_a_hint() {
    let server = TestServer::start();
    for (method, path) in [
        ("GET", "/posts"),
        ("POST", "/api/posts"),
        ("GET", "/comments/1"),
    ] {
        let response = server.json(method, path, "{}");
        let problem = problem(&response, 404);
        let hint = problem["hint"].as_str().unwrap_or("");
        assert!(
            hint.contains("/api/todos and /api/widgets"),
            "{method} {path}: {problem}"
        );
    }
    let problem = problem(&server.get("/favicon.ico"), 404);
    assert!(problem.get("hint").is_none(), "{problem}");
}
