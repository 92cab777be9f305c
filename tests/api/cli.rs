//! The binary itself: flags, exit statuses, the listening line, the access
//! log, and graceful shutdown on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_widgets-todos");

pub(crate) fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(BIN);
    command.args(args).env_clear();
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run binary")
}

/// Starts the binary with `args` and `env` (and nothing else in its
/// environment) and returns it with the address from its listening line.
pub(crate) fn spawn(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    spawn_in(Path::new("."), args, env)
}

/// [`spawn`] in the directory `dir`, so that a relative path such as
/// `db.json` is the file there. A start that fails panics with the
/// arguments and what the binary said on stderr.
pub(crate) fn spawn_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn binary");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let Some(addr) = line.trim().strip_prefix("listening on http://") else {
        let code = child.wait().unwrap().code();
        let mut stderr = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
        panic!("{args:?} {env:?}: first line {line:?}, exit {code:?}, stderr {stderr}");
    };
    (child, addr.to_string())
}

/// [`spawn`] without environment, with a client for the address.
pub(crate) fn spawn_remote(args: &[&str]) -> (Child, crate::support::Remote) {
    spawn_remote_env(args, &[])
}

/// [`spawn`], with a client for the address.
pub(crate) fn spawn_remote_env(
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, crate::support::Remote) {
    let (child, addr) = spawn(args, env);
    let remote = crate::support::Remote(addr.parse().expect("the listening address"));
    (child, remote)
}

/// SIGKILL, and the exit reaped.
pub(crate) fn kill_9(mut child: Child) {
    child.kill().expect("SIGKILL");
    let _ = child.wait();
}

pub(crate) fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

pub(crate) fn wait_with_timeout(
    child: &mut Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

/// Sends `signal` to the server and returns its exit code and its stderr.
pub(crate) fn stop_with(mut child: Child, signal: &str) -> (Option<i32>, String) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = wait_with_timeout(&mut child, Duration::from_secs(10));
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    (status.and_then(|s| s.code()), log)
}

#[test]
fn help_and_version_exit_zero() {
    let help = run(&["--help"], &[]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--host",
        "--port",
        "--threads",
        "--max-body-bytes",
        "--max-items",
        "--log-level",
        "MAX_ITEMS",
    ] {
        assert!(text.contains(flag), "help lacks {flag}");
    }
    // Readable: 80 columns, each option on its own line and described in
    // words after its flags (not only a variable or a default), no cryptic
    // shorthand; and only what is true: nothing implements a container
    // default for --host.
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
    let options: Vec<&str> = text.lines().filter(|l| l.starts_with("  -")).collect();
    assert!(options.len() >= 30, "{text}");
    for line in options {
        let said = line.get(23..).unwrap_or("").split(['[', '(']).next();
        let words = said.unwrap_or("").split_whitespace().count();
        assert!(words >= 2, "not described: {line}");
    }
    assert!(!text.contains("0: any"), "{text}");
    for said in ["NO_CORS", "ALLOW_RESET", "healthcheck", "DATA_FILE"] {
        assert!(text.contains(said), "help lacks {said}");
    }
    assert!(!text.contains("container"), "{text}");
    let version = run(&["--version"], &[]);
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("widgets-todos "));
}

#[test]
fn bad_flags_and_values_exit_2_with_one_line() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&["--bogus"], &[], "--bogus"),
        (&["--port", "99999"], &[], "--port"),
        (&["--port"], &[], "--port"),
        (&["--threads", "zero"], &[], "--threads"),
        (&["--max-body-bytes=-5"], &[], "--max-body-bytes"),
        (&["--log-level", "chatty"], &[], "--log-level"),
        (&[], &[("MAX_ITEMS", "lots")], "MAX_ITEMS"),
        (&[], &[("PORT", "-1")], "PORT"),
    ];
    for (args, env, name) in cases {
        let out = run(args, env);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(name), "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn port_in_use_exits_1() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    let out = run(&["--port", &port], &[]);
    assert_eq!(out.status.code(), Some(1));
    // One line: the address, and how to get past it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for said in [
        &format!("127.0.0.1:{port}"),
        "in use",
        "--port N",
        "PORT=N",
        "--port 0",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
}

#[test]
fn serves_logs_and_stops_on_sigterm() {
    let (child, addr) = spawn(&["--port", "0", "--log-level", "info"], &[]);
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );
    assert!(get(&addr, "/api/todos").starts_with("HTTP/1.1 200"));

    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let access = log
        .lines()
        .find(|l| l.contains("GET /api/todos"))
        .unwrap_or_else(|| panic!("no access line in {log}"));
    assert!(
        access.contains("127.0.0.1:") && access.contains(" 200 ") && access.contains("ms"),
        "{access}"
    );
}

/// No control character of a request line reaches the access
/// log as it was sent; an ESC there would drive the terminal, a VT or FF
/// break the line for many tools.
#[test]
fn the_access_log_escapes_control_characters() {
    let (child, remote) = spawn_remote(&["--port", "0", "--log-level", "info"]);
    let lines: [&[u8]; 3] = [
        b"GET /api/todos\x1b[2J\x1b[31mX HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"G\x1b[1mET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"GET /a\x08\x0b\x0c\x00\x7f\tb HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    ];
    for line in lines {
        let answer = remote.raw(line);
        assert!(answer.starts_with(b"HTTP/1.1 "), "{answer:?}");
    }
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    let bad = |c: char| (c < ' ' && c != '\n') || c == '\x7f';
    assert!(!log.contains(bad), "{log:?}");
    for said in [
        "GET /api/todos\\x1b[2J\\x1b[31mX 404 ",
        "G\\x1b[1mET /api 405 ",
        "GET /a\\x08\\x0b\\x0c\\x00\\x7f\\x09b 404 ",
    ] {
        assert!(log.contains(said), "{said} not in {log:?}");
    }
}

#[test]
fn environment_configures_and_flags_win() {
    // PORT=1 alone would fail (privileged); the flag wins over it.
    let (child, addr) = spawn(&["--port", "0"], &[("PORT", "1"), ("LOG_LEVEL", "off")]);
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert!(get(&addr, "/api").starts_with("HTTP/1.1 200"));
    let (code, log) = stop_with(child, "-INT");
    assert_eq!(code, Some(0));
    assert!(log.is_empty(), "LOG_LEVEL=off still logged: {log}");
}

/// Runs the binary with `--port 0` added and waits at most a few seconds:
/// a start-up that should fail but serves instead is killed, and reported
/// as no exit code. Returns the exit code and stderr.
pub(crate) fn run_expecting_exit(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .args(["--port", "0"])
        .env_clear()
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn binary");
    let status = wait_with_timeout(&mut child, Duration::from_secs(5));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.and_then(|s| s.code()), err)
}

/// A secret or other protection that is set but empty is refused (exit 2,
/// one line saying how to fix it), never read as "off": an empty
/// `AUTH_TOKEN` used to start a server with no authentication at all.
#[test]
fn an_empty_protection_setting_exits_2_and_never_means_off() {
    let dir = crate::support::TempDir::new("empty-token");
    let empty = dir.join("token");
    std::fs::write(&empty, "\n").unwrap();
    let empty = empty.to_str().unwrap();
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&[], &[("AUTH_TOKEN", "")], "AUTH_TOKEN"),
        (&[], &[("AUTH_TOKEN_FILE", "")], "AUTH_TOKEN_FILE"),
        (&[], &[("AUTH_TOKEN_FILE", empty)], "AUTH_TOKEN_FILE"),
        (&["--auth-token", ""], &[], "--auth-token"),
        (&["--auth-token="], &[], "--auth-token"),
        (&["--auth-token-file", empty], &[], "--auth-token-file"),
        (&[], &[("TLS_CERT", ""), ("TLS_KEY", "")], "TLS_CERT"),
        (&[], &[("CORS_ORIGINS", "")], "CORS_ORIGINS"),
    ];
    for (args, env, name) in cases {
        let (code, err) = run_expecting_exit(args, env);
        assert_eq!(code, Some(2), "{args:?} {env:?} started: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(name), "{err}");
    }
    let (_, err) = run_expecting_exit(&[], &[("AUTH_TOKEN", "")]);
    assert!(
        err.contains("unset it") && err.contains("authentication"),
        "the message says how to fix it: {err}"
    );
    // Other variables still count as unset when empty.
    let (child, addr) = spawn(&["--port", "0"], &[("LOG_LEVEL", ""), ("DATA_FILE", "")]);
    assert!(get(&addr, "/api").starts_with("HTTP/1.1 200"));
    kill_9(child);
}

/// A flag wins over its environment variable, as the README says, and the
/// variable is not even read: `PORT=abc widgets-todos --port 0` used to
/// exit 2. For the token, either flag wins over both token variables.
#[test]
fn a_flag_wins_and_its_variable_is_not_read() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&[], &[("PORT", "abc")], "HTTP/1.1 200"),
        (
            &["--log-level=warn"],
            &[("LOG_LEVEL", "loud")],
            "HTTP/1.1 200",
        ),
        (&["--threads", "2"], &[("THREADS", "0")], "HTTP/1.1 200"),
        (
            &["--no-cors"],
            &[("CORS_ORIGINS", "not-an-origin")],
            "HTTP/1.1 200",
        ),
        (
            &["--cors-origin", "http://a.test"],
            &[("CORS_ORIGINS", "")],
            "HTTP/1.1 200",
        ),
        (
            &["--auth-token", "good"],
            &[("AUTH_TOKEN", "has space")],
            "HTTP/1.1 401",
        ),
        (
            &["--auth-token", "good"],
            &[("AUTH_TOKEN", "")],
            "HTTP/1.1 401",
        ),
        (
            &["--auth-token=good"],
            &[("AUTH_TOKEN_FILE", "/nonexistent/token")],
            "HTTP/1.1 401",
        ),
    ];
    for (args, env, status) in cases {
        let args: Vec<&str> = args.iter().copied().chain(["--port", "0"]).collect();
        let (child, addr) = spawn(&args, env);
        let addr = addr.as_str();
        let answer = get(addr, "/api");
        assert!(answer.starts_with(status), "{args:?} {env:?}: {answer}");
        kill_9(child);
    }
    // An invalid variable for an option no flag sets still stops start-up.
    let out = run(&["--port", "0"], &[("MAX_ITEMS", "lots"), ("PORT", "abc")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MAX_ITEMS"));
}

/// Runs the binary, expecting exit status 2 and one line on stderr that
/// says each of `said`.
pub fn check_refused(args: &[&str], env: &[(&str, &str)], said: &[&str]) {
    let (code, err) = run_expecting_exit(args, env);
    assert_eq!(code, Some(2), "{args:?} {env:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?} {env:?}: {err}");
    for said in said {
        assert!(err.contains(said), "{args:?} {env:?}: lacks {said}: {err}");
    }
}

/// The token file is read no further than a token can reach
/// (1,024 characters and a line break), and only a regular file is read:
/// `/dev/zero` used to grow the process without bound, a FIFO to block
/// start-up for ever.
#[test]
fn a_token_file_is_a_regular_file_read_no_further_than_a_token() {
    let dir = crate::support::TempDir::new("token-file");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let dir_path = dir.0.to_str().unwrap().to_string();
    for path in ["/dev/zero", fifo.to_str().unwrap(), &dir_path] {
        let said = [
            "a regular file",
            "not a directory, FIFO or device",
            "set AUTH_TOKEN",
        ];
        check_refused(&["--auth-token-file", path], &[], &said);
        check_refused(&[], &[("AUTH_TOKEN_FILE", path)], &said);
    }
    let long = dir.join("long");
    std::fs::write(&long, "a".repeat(1025)).unwrap();
    let huge = dir.join("huge");
    std::fs::write(&huge, "a".repeat(10 << 20)).unwrap();
    for path in [&long, &huge] {
        let said = ["--auth-token-file", "1024 characters"];
        check_refused(&["--auth-token-file", path.to_str().unwrap()], &[], &said);
    }
    // The longest token, with its line break (CRLF too), is accepted.
    let longest = dir.join("longest");
    std::fs::write(&longest, format!("{}\r\n", "a".repeat(1024))).unwrap();
    let (child, remote) = spawn_remote(&[
        "--port",
        "0",
        "--auth-token-file",
        longest.to_str().unwrap(),
    ]);
    let bearer = format!("Authorization: Bearer {}", "a".repeat(1024));
    let served = remote.send("GET", "/api/todos", &[&bearer], b"");
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(served.status, 200, "{log}");
    assert_eq!(code, Some(0), "{log}");
}

/// json-server's habit, `widgets-todos db.json`, is `--data db.json`; the
/// start-up summary says what the file held. Given twice with two names,
/// or two files: exit 2.
#[test]
fn a_data_file_argument_means_data() {
    let dir = crate::support::TempDir::new("positional");
    let db = dir.join("db.json");
    let widget = r#"{"id": 1, "price": "$1", "quality": "good"}"#;
    std::fs::write(&db, format!(r#"{{"widgets": [{widget}], "todos": []}}"#)).unwrap();
    let db = db.to_str().unwrap();
    let (child, remote) = spawn_remote(&[db, "--port", "0"]);
    assert_eq!(remote.get("/api/widgets/1").status, 200);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains(&format!("data: {db}: 1 widget, 0 todos")),
        "{log}"
    );

    check_refused(
        &[db, "--data", "other.json"],
        &[],
        &["--data", "give it once"],
    );
    check_refused(
        &[db],
        &[("DATA_FILE", "other.json")],
        &["DATA_FILE", "once"],
    );
    check_refused(&[db, "second.json"], &[], &["second.json", "one data file"]);
}

/// `--no-cors` and `--allow-reset` have variables too: words for on and
/// off, anything else refused, the flag still winning.
#[test]
fn switches_have_environment_variables() {
    let origin = ["Origin: http://a.test"];
    let (child, remote) = spawn_remote_env(
        &["--port", "0"],
        &[("ALLOW_RESET", "Yes"), ("NO_CORS", "1")],
    );
    let answer = remote.send("GET", "/api", &origin, b"");
    assert_eq!(answer.header("Access-Control-Allow-Origin"), None);
    assert_eq!(remote.delete("/api/todos").status, 204);
    kill_9(child);

    let env = [("ALLOW_RESET", "false"), ("NO_CORS", "0")];
    let (child, remote) = spawn_remote_env(&["--port", "0"], &env);
    let answer = remote.send("GET", "/api", &origin, b"");
    assert!(answer.header("Access-Control-Allow-Origin").is_some());
    assert_eq!(remote.delete("/api/todos").status, 405);
    kill_9(child);

    let (child, remote) =
        spawn_remote_env(&["--port", "0", "--allow-reset"], &[("ALLOW_RESET", "x")]);
    assert_eq!(remote.delete("/api/todos").status, 204);
    kill_9(child);

    let accepted = "1, true or yes";
    check_refused(&[], &[("ALLOW_RESET", "")], &["ALLOW_RESET", accepted]);
    check_refused(&[], &[("NO_CORS", "on")], &["NO_CORS", accepted]);
    check_refused(&["--no-cors=1"], &[], &["--no-cors", "takes no value"]);
}

/// A host that is neither an address nor a name this machine resolves is a
/// bad value (exit 2), not a failed bind (exit 1).
#[test]
fn a_bad_host_exits_2() {
    let fix = "an IP address such as 127.0.0.1";
    check_refused(&["--host", "999.1.1.1"], &[], &["--host", "999.1.1.1", fix]);
    check_refused(&[], &[("HOST", "1.2.3")], &["HOST", fix]);
}

/// `--no-cors` with `--cors-origin` asks for two opposite things.
#[test]
fn no_cors_with_an_origin_list_says_they_contradict() {
    let said = ["--no-cors and --cors-origin contradict", "give only one"];
    check_refused(&["--no-cors", "--cors-origin", "http://a.test"], &[], &said);
    let env = [("NO_CORS", "1"), ("CORS_ORIGINS", "http://a.test")];
    check_refused(&[], &env, &["NO_CORS and CORS_ORIGINS contradict"]);
}

/// `touch db.json; widgets-todos db.json`: an empty file is an empty
/// store (the server never leaves one: it writes a snapshot whole or not
/// at all), and the summary says so. It is a snapshot from then on.
#[test]
fn an_empty_data_file_is_an_empty_store() {
    let dir = crate::support::TempDir::new("empty-data");
    let db = dir.join("db.json");
    std::fs::write(&db, "").unwrap();
    let db = db.to_str().unwrap();
    let (child, remote) = spawn_remote(&["--data", db, "--port", "0"]);
    assert_eq!(remote.get("/api/todos").text(), "[]");
    remote.create("/api/todos", r#"{"userId": 1, "title": "Buy milk"}"#);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains(&format!(
            "data: {db} (was empty: 0 bytes): 0 widgets, 0 todos"
        )),
        "{log}"
    );
    let (child, remote) = spawn_remote(&[db, "--port", "0"]);
    assert_eq!(remote.get("/api/todos/1").status, 200);
    let (_, log) = stop_with(child, "-TERM");
    assert!(log.contains("0 widgets, 1 todo"), "{log}");
}

/// The summary, on stderr below the listening line: the address, where the
/// data lives, and every setting that is not the default; never the token.
#[test]
fn start_up_summary_names_the_data_and_the_modes() {
    let (child, addr) = spawn(&["--port", "0"], &[]);
    let (_, log) = stop_with(child, "-TERM");
    assert!(
        log.starts_with(&format!(
            "widgets-todos {}: the API is at http://{addr}/api\ndata: in memory only",
            env!("CARGO_PKG_VERSION")
        )),
        "{log}"
    );
    assert!(!log.contains("modes:"), "{log}");

    let args = [
        "--port",
        "0",
        "--allow-reset",
        "--no-cors",
        "--delay",
        "5",
        "--max-items",
        "10",
        "--auth-token",
        "s3cr3t",
    ];
    let (child, _) = spawn(&args, &[]);
    let (_, log) = stop_with(child, "-TERM");
    let modes = log
        .lines()
        .find(|line| line.starts_with("modes: "))
        .unwrap_or_else(|| panic!("no modes line: {log}"));
    for mode in [
        "bearer token",
        "reset allowed",
        "CORS off",
        "delay 5 ms",
        "at most 10 items",
    ] {
        assert!(modes.contains(mode), "{mode}: {modes}");
    }
    assert!(!log.contains("s3cr3t"), "{log}");
}

/// `widgets-todos healthcheck` takes the server's own --host/--port (or
/// HOST/PORT): 0 when /healthz answers 200, 1 with a reason otherwise.
#[test]
fn healthcheck_says_whether_the_server_answers() {
    let (child, addr) = spawn(&["--port", "0"], &[]);
    let port = addr.rsplit(':').next().unwrap().to_string();
    let out = run(&["healthcheck", "--port", &port], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A server listening on every address is asked on loopback.
    let out = run(&["healthcheck"], &[("HOST", "0.0.0.0"), ("PORT", &port)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    kill_9(child);

    // Nothing listening.
    let port = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().port().to_string()
    };
    let out = run(&["healthcheck", "--port", &port], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("cannot connect to 127.0.0.1:{port}")),
        "{err}"
    );

    // Something that takes the connection and never answers: 1 after the
    // second, not a hang.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let started = Instant::now();
    let out = run(&["healthcheck", "--port", &port], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not answer within 1 s"), "{err}");

    // An answer other than 200 (a server whose journal failed says 503).
    let unwell = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = unwell.local_addr().unwrap().port().to_string();
    let answering = std::thread::spawn(move || {
        let (mut stream, _) = unwell.accept().unwrap();
        let mut request = [0; 1024];
        let _ = stream.read(&mut request);
        stream
            .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    });
    let out = run(&["healthcheck", "--port", &port], &[]);
    answering.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("503 Service Unavailable', not 200"), "{err}");

    let out = run(&["healthcheck", "--data", "x"], &[]);
    assert_eq!(out.status.code(), Some(2));
}
