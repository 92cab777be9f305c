//! The options themselves: each flag with its environment variable and
//! how its value is checked and stored ([`OPTS`]), the value parsers they
//! share, and the `--help` text that lists them.

use std::io::Read;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::{Config, MAX_DELAY_MS, Secret, fault_settings};
use crate::model::generate::parse_spec;

/// `--help`: every option, what it does, its default and its variable,
/// grouped by what it is for, in 80 columns (a test checks). The table of
/// docs/configuration.md says the same at more length (a test holds the
/// two to the same flags and variables).
pub const HELP: &str = "\
widgets-todos: an HTTP/JSON server for widgets and todos under /api

Usage: widgets-todos [OPTIONS] [FILE.json]     (FILE.json: the same as --data)
       widgets-todos healthcheck [--host ADDR] [--port N]  (exit 0: it is up)
       widgets-todos import DB.json --out FILE.json  (from a json-server file)

Each option may be given by the environment variable in [ ]; a flag wins.
Defaults in ( ). -h, --help: this text; -V, --version: the version.

Where to listen, and the data:
  -H, --host ADDR      address to listen on (127.0.0.1; 0.0.0.0: on every
                       interface) [HOST]
  -p, --port N         the port to listen on (8080; 0 picks a free one) [PORT]
  --data PATH          keep the data in PATH and PATH.journal (none: in
                       memory, lost at exit) [DATA_FILE]
  -w, --watch          load edits other programs make to the data file [WATCH]
  -c, --config FILE    read options from a JSON file such as json-server.json:
                       {\"port\": 3000, \"readOnly\": true} [CONFIG_FILE]
  --generate SPEC      fill a new store: todos=N,widgets=N [GENERATE]
  --seed S             the same seed, the same items and failures (0) [SEED]
What clients may do:
  --ro, --read-only    serve reads only: writes get 405 [READ_ONLY]
  --allow-reset        DELETE on a collection empties it [ALLOW_RESET]
  --auth-token T       require Authorization: Bearer T on /api [AUTH_TOKEN]
  --auth-token-file F  the same, the token read from file F [AUTH_TOKEN_FILE]
  --cors-origin URL    browsers may call only from URL (any origin)
                       [CORS_ORIGINS]
  --nc, --no-cors      send no CORS header fields at all [NO_CORS]
For testing clients:
  -d, --delay MS       hold each /api response MS ms, 0 to 10000 (0) [DELAY]
  --record N           keep the last N requests for /_admin/requests [RECORD]
  --faults             fail on purpose when a request asks (_status) [FAULTS]
  --fail-rate P        with --faults: fail this share of requests, 0 to 1
                       (0) [FAIL_RATE]
  --fail-status N      with --faults: the status they fail with (503)
                       [FAIL_STATUS]
Limits:
  --threads N          requests handled at once (CPUs; 16+ with --data)
                       [THREADS]
  --max-body-bytes N   larger request bodies get 413 (65536) [MAX_BODY_BYTES]
  --max-items N        items per collection; then 507 (100000) [MAX_ITEMS]
  --max-connections N  connections open at once (1024, or fewer under a
                       low ulimit -n) [MAX_CONNECTIONS]
  --max-subscribers N  clients of /api/events at once (64) [MAX_SUBSCRIBERS]
  --events-kept N      events kept for /api/events (1024) [EVENTS_KEPT]
  --read-timeout S     seconds a client may stay silent (30) [READ_TIMEOUT]
  --write-timeout S    seconds a response may take to send (30) [WRITE_TIMEOUT]
  --keep-alive-timeout S  seconds an idle connection is kept (30)
                       [KEEP_ALIVE_TIMEOUT]
Logs and HTTPS:
  --log-level L        off, error, warn, info, debug or trace (info)
                       [LOG_LEVEL]
  -q, --quiet          no access log, the line per request (off) [QUIET]
  --tls-cert PEM       serve HTTPS with this certificate chain [TLS_CERT]
  --tls-key PEM        and this key (a build with --features tls) [TLS_KEY]

A switch's variable takes 1, true, yes; 0, false, no. An empty one is unset,
but an empty AUTH_*, TLS_*, CORS_ORIGINS or switch is refused.
Exit status 2: a bad option or value; 1: a busy port or bad data.";

/// The largest `--record N`.
pub const MAX_RECORD: usize = 100_000;

/// One option: its flag and its environment variable. What it takes and
/// how its value is stored is [`Opt::set`].
pub(super) struct Opt {
    pub flag: &'static str,
    pub env: &'static str,
}

/// Every option, in the order `--help` groups them.
pub(super) const OPTS: &[Opt] = &[
    Opt::new("--host", "HOST"),
    Opt::new("--port", "PORT"),
    Opt::new("--threads", "THREADS"),
    Opt::new("--max-body-bytes", "MAX_BODY_BYTES"),
    Opt::new("--max-items", "MAX_ITEMS"),
    Opt::new("--log-level", "LOG_LEVEL"),
    Opt::new("--read-timeout", "READ_TIMEOUT"),
    Opt::new("--data", "DATA_FILE"),
    Opt::new("--cors-origin", "CORS_ORIGINS"),
    Opt::new("--no-cors", "NO_CORS"),
    Opt::new("--allow-reset", "ALLOW_RESET"),
    Opt::new("--delay", "DELAY"),
    Opt::new("--auth-token", "AUTH_TOKEN"),
    Opt::new("--auth-token-file", "AUTH_TOKEN_FILE"),
    Opt::new("--tls-cert", "TLS_CERT"),
    Opt::new("--tls-key", "TLS_KEY"),
    Opt::new("--max-connections", "MAX_CONNECTIONS"),
    Opt::new("--max-subscribers", "MAX_SUBSCRIBERS"),
    Opt::new("--events-kept", "EVENTS_KEPT"),
    Opt::new("--keep-alive-timeout", "KEEP_ALIVE_TIMEOUT"),
    Opt::new("--write-timeout", "WRITE_TIMEOUT"),
    Opt::new("--generate", "GENERATE"),
    Opt::new("--seed", "SEED"),
    Opt::new("--record", "RECORD"),
    Opt::new("--faults", "FAULTS"),
    Opt::new("--fail-rate", "FAIL_RATE"),
    Opt::new("--watch", "WATCH"),
    Opt::new("--read-only", "READ_ONLY"),
    Opt::new("--quiet", "QUIET"),
    Opt::new("--config", "CONFIG_FILE"),
    Opt::new("--fail-status", "FAIL_STATUS"),
];

impl Opt {
    const fn new(flag: &'static str, env: &'static str) -> Opt {
        Opt { flag, env }
    }

    /// Checks a value of this option and stores it in `c`; the error says
    /// what was expected.
    pub fn set(&self, c: &mut Config, v: &str) -> Result<(), &'static str> {
        match self.flag {
            "--host" => c.host = host(v)?,
            "--port" => {
                c.port = number(v, 0, u16::MAX as usize).ok_or("a port from 0 to 65535")? as u16
            }
            "--threads" => c.threads = number(v, 1, 1024).ok_or("a whole number from 1 to 1024")?,
            "--max-body-bytes" => {
                c.max_body_bytes =
                    number(v, 1, 1 << 30).ok_or("a whole number of bytes from 1 to 1073741824")?
            }
            "--max-items" => {
                c.max_items =
                    number(v, 0, 100_000_000).ok_or("a whole number from 0 to 100000000")?
            }
            "--log-level" => {
                c.log_level = v
                    .parse()
                    .map_err(|_| "one of off, error, warn, info, debug, trace")?
            }
            "--read-timeout" => {
                c.read_timeout = seconds(v).ok_or("whole seconds from 1 to 3600")?
            }
            "--data" => {
                if v.trim().is_empty() {
                    return Err("a file path");
                }
                c.data = Some(PathBuf::from(v));
            }
            "--cors-origin" => {
                const EXPECTED: &str = "origins like http://localhost:3000, comma-separated";
                for origin in v.split(',') {
                    let origin = parse_origin(origin).ok_or(EXPECTED)?;
                    match &mut c.cors {
                        Cors::Origins(origins) => origins.push(origin),
                        _ => c.cors = Cors::Origins(vec![origin]),
                    }
                }
            }
            "--no-cors" => {
                if switch(v)? {
                    c.cors = Cors::Off;
                }
            }
            "--allow-reset" => c.allow_reset = switch(v)?,
            "--delay" => {
                let ms =
                    number(v, 0, MAX_DELAY_MS as usize).ok_or("milliseconds from 0 to 10000")?;
                c.delay = Duration::from_millis(ms as u64);
            }
            "--auth-token" => c.auth_token = Some(token(v)?),
            "--auth-token-file" => c.auth_token = Some(token_file(v)?),
            "--tls-cert" => return tls_file(c, v, true),
            "--tls-key" => return tls_file(c, v, false),
            "--max-connections" => {
                c.max_connections =
                    Some(number(v, 1, 1_000_000).ok_or("a whole number from 1 to 1000000")?)
            }
            "--max-subscribers" => {
                c.max_subscribers =
                    number(v, 0, 100_000).ok_or("a whole number from 0 to 100000")?
            }
            "--events-kept" => {
                c.events_kept =
                    Some(number(v, 1, 100_000).ok_or("a whole number from 1 to 100000")?)
            }
            "--keep-alive-timeout" => {
                c.keep_alive_timeout = seconds(v).ok_or("whole seconds from 1 to 3600")?
            }
            "--write-timeout" => {
                c.write_timeout = seconds(v).ok_or("whole seconds from 1 to 3600")?
            }
            "--generate" => c.generate = Some(parse_spec(v)?),
            "--seed" => {
                let v = v.trim();
                c.seed = v
                    .parse()
                    .ok()
                    .filter(|_| v.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or("a whole number from 0 to 18446744073709551615")?;
            }
            "--record" => {
                c.record =
                    Some(number(v, 1, MAX_RECORD).ok_or("a number of requests from 1 to 100000")?)
            }
            "--faults" => c.faults.on = switch(v)?,
            "--fail-rate" => c.faults.rate = Some(fault_settings::rate(v)?),
            "--watch" => c.watch = switch(v)?,
            "--read-only" => c.read_only = switch(v)?,
            "--quiet" => c.quiet = switch(v)?,
            // Read by `parse` before any option is applied: each key of the
            // file is given as its option (`file.rs`).
            "--config" => {}
            "--fail-status" => c.faults.status = Some(fault_settings::failure(v)?),
            other => unreachable!("{other} is not in OPTS"),
        }
        Ok(())
    }

    /// Whether the flag takes a value (`--port 8080`) or is a switch
    /// (`--no-cors`).
    pub fn takes_value(&self) -> bool {
        !SWITCHES.contains(&self.flag)
    }
}

/// The options that are switches: the flag alone turns them on, and their
/// variable takes [`switch`]'s words.
const SWITCHES: [&str; 6] = [
    "--no-cors",
    "--allow-reset",
    "--faults",
    "--watch",
    "--read-only",
    "--quiet",
];

/// json-server 0.17's spellings of the options it shares with this
/// server, so that its command lines run as they are
/// (`json-server --watch db.json -p 3000`): each with the option it names.
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("-p", "--port"),
    ("-H", "--host"),
    ("-w", "--watch"),
    ("-d", "--delay"),
    ("--ro", "--read-only"),
    ("--nc", "--no-cors"),
    ("-q", "--quiet"),
    ("-c", "--config"),
];

/// A switch's value: `1`, `true`, `yes` or `0`, `false`, `no`, in any case.
/// Anything else, the empty string included, is refused rather than read
/// as off: `ALLOW_RESET=on` should not quietly leave reset off.
pub(super) fn switch(text: &str) -> Result<bool, &'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err("1, true or yes to turn it on; 0, false or no to leave it off"),
    }
}

/// A `--host`: an IP address, or a name this machine resolves (looked up
/// now, so that a typo is a bad value, exit 2, and not a failed bind).
/// Dotted digits that are no IPv4 address (`999.1.1.1`, `1.2.3`) are
/// refused without a lookup.
fn host(text: &str) -> Result<String, &'static str> {
    const EXPECTED: &str = "an IP address such as 127.0.0.1, 0.0.0.0 or ::1, or a host name \
         this machine resolves, such as localhost";
    if text.parse::<IpAddr>().is_ok() {
        return Ok(text.to_string());
    }
    let dotted_digits = text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if text.trim().is_empty() || dotted_digits {
        return Err(EXPECTED);
    }
    let resolves = (text, 0)
        .to_socket_addrs()
        .is_ok_and(|mut addrs| addrs.next().is_some());
    if resolves {
        Ok(text.to_string())
    } else {
        Err(EXPECTED)
    }
}

/// The variables that switch a protection on, with the protection. Set but
/// empty, they are refused rather than counted as unset: an empty
/// `AUTH_TOKEN` is far likelier a secret that failed to arrive (a template's
/// unset variable, a missing mount) than a wish to run without
/// authentication, and serving open, over plain HTTP, or to every origin is
/// the reading that cannot be taken back.
pub const FAIL_CLOSED: &[(&str, &str)] = &[
    ("AUTH_TOKEN", "authentication"),
    ("AUTH_TOKEN_FILE", "authentication"),
    ("TLS_CERT", "HTTPS"),
    ("TLS_KEY", "HTTPS"),
    ("CORS_ORIGINS", "a CORS allow-list (any origin may call)"),
];

/// Records a `--tls-cert` or `--tls-key` path; `parse` checks that both
/// came. A build without the `tls` feature refuses them.
fn tls_file(c: &mut Config, path: &str, cert: bool) -> Result<(), &'static str> {
    if !cfg!(feature = "tls") {
        return Err("a build with HTTPS: cargo build --release --features tls");
    }
    if path.trim().is_empty() {
        return Err("a PEM file path");
    }
    let (mut cert_path, mut key_path) = c.tls.take().unwrap_or_default();
    if cert {
        cert_path = PathBuf::from(path);
    } else {
        key_path = PathBuf::from(path);
    }
    c.tls = Some((cert_path, key_path));
    Ok(())
}

/// A value as an error message may show it: never a token.
pub(super) fn shown(opt: &Opt, value: String) -> String {
    if opt.flag == "--auth-token" && !value.is_empty() {
        "(hidden)".into()
    } else {
        value
    }
}

/// The token of `--auth-token-file`: the file's text without its final
/// line breaks. Only a regular file is read (a FIFO would block start-up,
/// `/dev/zero` never end), and no further than the longest token and a
/// CRLF.
fn token_file(path: &str) -> Result<Secret, &'static str> {
    const MOST: u64 = TOKEN_MAX as u64 + 2;
    let not_regular = "a regular file holding the token, not a directory, FIFO or device \
                       (for a token from a program, set AUTH_TOKEN instead)";
    // Checked before opening: opening a FIFO waits for a writer.
    let metadata = std::fs::metadata(path).map_err(|_| "a readable file holding the token")?;
    if !metadata.is_file() {
        return Err(not_regular);
    }
    let file = std::fs::File::open(path).map_err(|_| "a readable file holding the token")?;
    let mut bytes = Vec::new();
    file.take(MOST + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "a readable file holding the token")?;
    if bytes.len() as u64 > MOST {
        return Err("a file holding only the token, at most 1024 characters and a line break");
    }
    let text = String::from_utf8(bytes).map_err(|_| TOKEN_RULE)?;
    let text = text.trim_end_matches(['\n', '\r']);
    if text.is_empty() {
        return Err("a file holding the token; this one is empty");
    }
    token(text)
}

/// The longest bearer token taken.
const TOKEN_MAX: usize = 1024;

const TOKEN_RULE: &str = "a token of 1 to 1024 characters from A-Z a-z 0-9 - . _ ~ + / =";

/// A bearer token: the characters RFC 6750 allows (`b64token`), 1 to 1024.
fn token(text: &str) -> Result<Secret, &'static str> {
    let valid = !text.is_empty()
        && text.len() <= TOKEN_MAX
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
    if valid {
        Ok(Secret::new(text))
    } else {
        Err(TOKEN_RULE)
    }
}

fn seconds(text: &str) -> Option<Duration> {
    number(text, 1, 3600).map(|n| Duration::from_secs(n as u64))
}

fn number(text: &str, min: usize, max: usize) -> Option<usize> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|n| (min..=max).contains(n))
}

/// Which origins browsers may call the API from (`--cors-origin`,
/// `--no-cors`); the application sends the header fields (`app`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cors {
    /// Any origin, each echoed with credentials allowed: the default.
    #[default]
    Any,
    /// Only these origins, as `scheme://host[:port]`, lowercase.
    Origins(Vec<String>),
    /// No CORS header fields at all.
    Off,
}

/// Checks one `--cors-origin` value: `scheme://host[:port]`, nothing after.
pub fn parse_origin(text: &str) -> Option<String> {
    let text = text.trim().to_ascii_lowercase();
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))?;
    let valid = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    valid.then_some(text)
}
