//! The binary itself: flags, exit statuses, the listening line, the access
//! log, and graceful shutdown on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
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
    let mut child = Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn binary");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, addr)
}

/// [`spawn`] without environment, with a client for the address.
pub(crate) fn spawn_remote(args: &[&str]) -> (Child, crate::support::Remote) {
    let (child, addr) = spawn(args, &[]);
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("in use"));
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
