//! Command-line flags and environment variables, turned into a [`Config`].
//!
//! Every option has a flag and an environment variable; the flag wins, and
//! the variable of an option a flag sets is not read at all. A bad flag or
//! value is a [`ConfigError`], which `main` prints as one line and turns
//! into exit status 2. An environment variable set to the empty string
//! counts as unset, as container tools often pass empty variables through;
//! except a variable that switches a protection on ([`FAIL_CLOSED`]): set
//! but empty, it is refused, never read as "off".

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

mod options;

pub use options::{Cors, FAIL_CLOSED, HELP, parse_origin};
use options::{OPTS, Opt, shown};

/// Everything the server needs to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub host: String,
    pub port: u16,
    pub threads: usize,
    pub max_body_bytes: usize,
    pub max_items: usize,
    pub log_level: log::LevelFilter,
    /// How long a connection may stay silent, and how long a request body
    /// may take in all, before the server gives up on the client.
    pub read_timeout: Duration,
    /// How long one write to a client may block before it is dropped.
    pub write_timeout: Duration,
    /// `--data`: where the data is kept; `None` keeps it in memory only.
    pub data: Option<PathBuf>,
    /// `--cors-origin`, `--no-cors`: which origins browsers may call from.
    pub cors: Cors,
    /// `--allow-reset`: `DELETE` on a collection empties it.
    pub allow_reset: bool,
    /// `--delay`: added before every `/api` response.
    pub delay: Duration,
    /// `--auth-token`, `--auth-token-file`: the bearer token `/api` needs.
    pub auth_token: Option<Secret>,
    /// `--tls-cert`, `--tls-key`: PEM files; with both, serve HTTPS (builds
    /// with the `tls` feature only).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--max-connections`: how many connections may be open at once;
    /// `None` for the transport's default (fewer under a low descriptor
    /// limit).
    pub max_connections: Option<usize>,
}

/// A value that must not be printed: `Debug` shows only its length.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

/// The longest `--delay` and `_delay`, in milliseconds.
pub const MAX_DELAY_MS: u64 = 10_000;

impl Default for Config {
    fn default() -> Config {
        Config {
            host: "127.0.0.1".into(),
            port: 8080,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_body_bytes: 65_536,
            max_items: 100_000,
            log_level: log::LevelFilter::Info,
            read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            data: None,
            cors: Cors::Any,
            allow_reset: false,
            delay: Duration::ZERO,
            auth_token: None,
            tls: None,
            max_connections: None,
        }
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Box<Config>),
    Help,
    Version,
}

/// A flag or value we cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A flag we do not know.
    UnknownFlag(String),
    /// A flag given without its value.
    MissingValue(&'static str),
    /// A variable of [`FAIL_CLOSED`] set to the empty string.
    EmptyProtection {
        variable: &'static str,
        protection: &'static str,
    },
    /// A value out of range or of the wrong form; `source` is the flag or
    /// variable it came from.
    BadValue {
        source: String,
        value: String,
        expected: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownFlag(flag) => write!(f, "unknown option '{flag}' (see --help)"),
            ConfigError::MissingValue(flag) => {
                write!(f, "option '{flag}' needs a value (see --help)")
            }
            ConfigError::EmptyProtection {
                variable,
                protection,
            } => write!(
                f,
                "environment variable {variable} is set but empty: give it a value, or unset it to run without {protection}"
            ),
            ConfigError::BadValue {
                source,
                value,
                expected,
            } => write!(
                f,
                "invalid value '{value}' for {source}: expected {expected}"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reads the options: the flags in `args` (without the program name), then
/// the environment (through `env`, so tests need not touch the real one)
/// for every option no flag set.
pub fn parse(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Command, ConfigError> {
    let args: Vec<String> = args.into_iter().collect();
    // Help and version win over anything else, bad values included.
    for arg in &args {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            _ => {}
        }
    }
    // The flags first, only split into options and values, so that the
    // environment is read only for the options no flag sets: a flag wins,
    // and the variable it overrides cannot stop start-up.
    let mut flags: Vec<(&Opt, String)> = Vec::new();
    let (mut no_cors, mut allow_reset) = (false, false);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--no-cors" {
            no_cors = true;
            continue;
        }
        if arg == "--allow-reset" {
            allow_reset = true;
            continue;
        }
        // Both `--port 8080` and `--port=8080`.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let opt = OPTS
            .iter()
            .find(|opt| opt.flag == name)
            .ok_or_else(|| ConfigError::UnknownFlag(arg.clone()))?;
        let value = match inline {
            Some(value) => value,
            None => args.next().ok_or(ConfigError::MissingValue(opt.flag))?,
        };
        flags.push((opt, value));
    }
    let flagged = |opt: &Opt| {
        flags.iter().any(|(given, _)| same_setting(given, opt))
            || (no_cors && opt.flag == "--cors-origin")
    };

    let mut config = Config {
        allow_reset,
        ..Config::default()
    };
    for opt in OPTS.iter().filter(|opt| !flagged(opt)) {
        let Some(value) = env(opt.env) else {
            continue;
        };
        if value.is_empty() {
            match FAIL_CLOSED
                .iter()
                .find(|(variable, _)| *variable == opt.env)
            {
                Some(&(variable, protection)) => {
                    return Err(ConfigError::EmptyProtection {
                        variable,
                        protection,
                    });
                }
                None => continue,
            }
        }
        (opt.set)(&mut config, &value).map_err(|expected| ConfigError::BadValue {
            source: format!("environment variable {}", opt.env),
            value: shown(opt, value),
            expected,
        })?;
    }

    let explicit_threads = flags.iter().any(|(opt, _)| opt.flag == "--threads")
        || env("THREADS").is_some_and(|v| !v.is_empty());

    if no_cors && flags.iter().any(|(opt, _)| opt.flag == "--cors-origin") {
        return Err(ConfigError::BadValue {
            source: "--no-cors".into(),
            value: "--no-cors".into(),
            expected: "either --no-cors or --cors-origin, not both",
        });
    }
    if no_cors {
        config.cors = Cors::Off;
    }
    for (opt, value) in &flags {
        (opt.set)(&mut config, value).map_err(|expected| ConfigError::BadValue {
            source: opt.flag.to_string(),
            value: shown(opt, value.clone()),
            expected,
        })?;
    }
    if let Some((cert, key)) = &config.tls {
        let missing = match (cert.as_os_str().is_empty(), key.as_os_str().is_empty()) {
            (true, _) => Some("--tls-cert"),
            (_, true) => Some("--tls-key"),
            _ => None,
        };
        if let Some(flag) = missing {
            return Err(ConfigError::BadValue {
                source: flag.into(),
                value: String::new(),
                expected: "--tls-cert and --tls-key together",
            });
        }
    }
    if config.data.is_some() && !explicit_threads {
        // A durable write waits for the disk in its worker; the more writers
        // wait together, the more of them share one fsync.
        config.threads = config.threads.max(DURABLE_THREADS);
    }
    Ok(Command::Serve(Box::new(config)))
}

/// Whether a flag for option `given` means that `opt`'s variable is not
/// read: the same option, or the other way to give the bearer token.
fn same_setting(given: &Opt, opt: &Opt) -> bool {
    const TOKEN: [&str; 2] = ["--auth-token", "--auth-token-file"];
    given.flag == opt.flag || (TOKEN.contains(&given.flag) && TOKEN.contains(&opt.flag))
}

/// The default `--threads` with `--data`, when more than the CPUs.
pub const DURABLE_THREADS: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked() {
        assert_eq!(
            parse_origin("HTTP://Localhost:3000"),
            Some("http://localhost:3000".into())
        );
        assert_eq!(
            parse_origin("https://[::1]:8443"),
            Some("https://[::1]:8443".into())
        );
        for bad in [
            "localhost:3000",
            "http://",
            "http://a.test/",
            "ftp://a",
            "*",
        ] {
            assert_eq!(parse_origin(bad), None, "{bad}");
        }
    }

    fn parse_with(args: &[&str], env: &[(&str, &str)]) -> Result<Command, ConfigError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(args.iter().map(|a| a.to_string()), move |name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    fn config(args: &[&str], env: &[(&str, &str)]) -> Config {
        match parse_with(args, env) {
            Ok(Command::Serve(config)) => *config,
            other => panic!("expected a config, got {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let c = config(&[], &[]);
        assert_eq!(
            (c.host.as_str(), c.port, c.max_body_bytes, c.max_items),
            ("127.0.0.1", 8080, 65536, 100_000)
        );
        assert_eq!(c.log_level, log::LevelFilter::Info);
        assert_eq!(
            (c.read_timeout.as_secs(), c.write_timeout.as_secs()),
            (30, 30)
        );
        assert!(c.threads >= 1);
    }

    #[test]
    fn flags_override_environment() {
        let c = config(
            &["--port", "9000", "--threads=3"],
            &[("PORT", "7000"), ("MAX_ITEMS", "5"), ("HOST", "")],
        );
        assert_eq!((c.port, c.threads, c.max_items), (9000, 3, 5));
        assert_eq!(c.host, "127.0.0.1");
        assert_eq!(
            config(&["--log-level", "warn"], &[("LOG_LEVEL", "debug")]).log_level,
            log::LevelFilter::Warn
        );
    }

    #[test]
    fn a_flag_leaves_its_variable_unread() {
        let c = config(
            &["--port", "9000", "--log-level=warn", "--no-cors"],
            &[
                ("PORT", "abc"),
                ("LOG_LEVEL", "loud"),
                ("CORS_ORIGINS", "not-an-origin"),
            ],
        );
        assert_eq!((c.port, c.log_level), (9000, log::LevelFilter::Warn));
        assert_eq!(c.cors, Cors::Off);
        // Either token flag sets the one token: neither variable is read.
        let token = Some(Secret::new("good"));
        let env = [("AUTH_TOKEN", ""), ("AUTH_TOKEN_FILE", "/nonexistent/t")];
        assert_eq!(config(&["--auth-token", "good"], &env).auth_token, token);
        // Not read at all, not merely overridden.
        let args = ["--port", "1", "--threads", "2", "--auth-token", "t"];
        let parsed = parse(args.map(String::from), |name| {
            assert!(
                !matches!(name, "PORT" | "THREADS" | "AUTH_TOKEN" | "AUTH_TOKEN_FILE"),
                "{name} was read"
            );
            None
        });
        assert!(parsed.is_ok());
        // A bad variable for an option no flag sets still stops start-up.
        let err = parse_with(&["--port", "1"], &[("PORT", "abc"), ("MAX_ITEMS", "x")]);
        assert!(err.unwrap_err().to_string().contains("MAX_ITEMS"));
    }

    #[test]
    fn data_file_and_its_worker_default() {
        let c = config(&["--data", "state.json"], &[]);
        assert_eq!(c.data, Some(PathBuf::from("state.json")));
        assert!(c.threads >= DURABLE_THREADS);
        let c = config(&[], &[("DATA_FILE", "env.json")]);
        assert_eq!(c.data, Some(PathBuf::from("env.json")));
        // An explicit worker count wins, from a flag or the environment.
        assert_eq!(config(&["--data", "s", "--threads", "2"], &[]).threads, 2);
        assert_eq!(config(&["--data=s"], &[("THREADS", "3")]).threads, 3);
        assert_eq!(config(&[], &[("DATA_FILE", "")]).data, None);
    }

    #[test]
    fn tester_flags() {
        let c = config(
            &[
                "--allow-reset",
                "--delay",
                "250",
                "--auth-token",
                "s3cr3t.token",
            ],
            &[],
        );
        assert!(c.allow_reset);
        assert_eq!(c.delay, Duration::from_millis(250));
        assert_eq!(c.auth_token, Some(Secret::new("s3cr3t.token")));
        assert!(
            !format!("{c:?}").contains("s3cr3t"),
            "the token is never printed"
        );
        assert_eq!(
            config(&[], &[("AUTH_TOKEN", "abc")]).auth_token,
            Some(Secret::new("abc"))
        );
        assert!(parse_with(&["--delay", "10001"], &[]).is_err());
        assert!(parse_with(&["--auth-token", "has space"], &[]).is_err());
        assert!(parse_with(&["--auth-token-file", "/nonexistent/token"], &[]).is_err());
        let path = std::env::temp_dir().join(format!("wt-token-{}", std::process::id()));
        std::fs::write(&path, "from-file\n").unwrap();
        let c = config(&["--auth-token-file", path.to_str().unwrap()], &[]);
        assert_eq!(c.auth_token, Some(Secret::new("from-file")));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn empty_protections_are_refused_others_count_as_unset() {
        for (variable, _) in FAIL_CLOSED {
            let err = parse_with(&[], &[(variable, "")]).unwrap_err();
            assert!(
                matches!(err, ConfigError::EmptyProtection { variable: v, .. } if v == *variable),
                "{variable}: {err:?}"
            );
            assert!(err.to_string().contains("unset it"), "{err}");
        }
        assert_eq!(
            config(&[], &[("DATA_FILE", ""), ("PORT", ""), ("DELAY", "")]),
            config(&[], &[])
        );
        assert!(parse_with(&["--auth-token", ""], &[]).is_err());
        let path = std::env::temp_dir().join(format!("wt-empty-token-{}", std::process::id()));
        std::fs::write(&path, "\r\n").unwrap();
        let err = parse_with(&["--auth-token-file", path.to_str().unwrap()], &[]).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn tls_flags() {
        let both = parse_with(&["--tls-cert", "c.pem", "--tls-key", "k.pem"], &[]);
        if cfg!(feature = "tls") {
            assert!(both.is_ok());
            let err = parse_with(&["--tls-cert", "c.pem"], &[]).unwrap_err();
            assert!(err.to_string().contains("together"), "{err}");
        } else {
            let err = both.unwrap_err().to_string();
            assert!(err.contains("--features tls"), "{err}");
        }
    }

    #[test]
    fn cors_flags() {
        assert_eq!(config(&[], &[]).cors, Cors::Any);
        assert_eq!(config(&["--no-cors"], &[]).cors, Cors::Off);
        let origins = |list: &[&str]| Cors::Origins(list.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            config(
                &[
                    "--cors-origin",
                    "http://a.test",
                    "--cors-origin=https://b.test:8443"
                ],
                &[]
            )
            .cors,
            origins(&["http://a.test", "https://b.test:8443"])
        );
        assert_eq!(
            config(&[], &[("CORS_ORIGINS", "http://a.test, http://B.test")]).cors,
            origins(&["http://a.test", "http://b.test"])
        );
        // Flags replace the environment's list.
        assert_eq!(
            config(
                &["--cors-origin", "http://c.test"],
                &[("CORS_ORIGINS", "http://a.test")]
            )
            .cors,
            origins(&["http://c.test"])
        );
        assert!(parse_with(&["--cors-origin", "a.test"], &[]).is_err());
        assert!(parse_with(&["--no-cors", "--cors-origin", "http://a.test"], &[]).is_err());
    }

    #[test]
    fn errors_name_the_flag_or_variable() {
        let err =
            |args: &[&str], env: &[(&str, &str)]| parse_with(args, env).unwrap_err().to_string();
        assert!(err(&["--port", "70000"], &[]).contains("--port"));
        assert!(err(&["--threads", "0"], &[]).contains("--threads"));
        assert!(err(&["--bogus"], &[]).contains("--bogus"));
        assert!(err(&["--port"], &[]).contains("--port"));
        assert!(err(&[], &[("MAX_BODY_BYTES", "-1")]).contains("MAX_BODY_BYTES"));
        assert!(err(&["--log-level", "loud"], &[]).contains("--log-level"));
        assert!(err(&["--read-timeout", "0"], &[]).contains("--read-timeout"));
        assert!(err(&[], &[("WRITE_TIMEOUT", "1.5")]).contains("WRITE_TIMEOUT"));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse_with(&["--help"], &[]), Ok(Command::Help));
        assert_eq!(
            parse_with(&["--port", "1", "-V"], &[]),
            Ok(Command::Version)
        );
    }
}
