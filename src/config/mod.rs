//! Command-line flags and environment variables, turned into a [`Config`].
//!
//! Every option has a flag and an environment variable; the flag wins, and
//! the variable of an option a flag sets is not read at all. A bad flag or
//! value is a [`ConfigError`], which `main` prints as one line and turns
//! into exit status 2. An environment variable set to the empty string
//! counts as unset, as container tools often pass empty variables through;
//! except a variable that switches a protection on ([`FAIL_CLOSED`]): set
//! but empty, it is refused, never read as "off"; and a switch's variable
//! (`NO_CORS`, `ALLOW_RESET`), which takes only the words of
//! `options::switch`. An argument that is not an option is the data file
//! (`widgets-todos db.json`); a first argument `healthcheck` is that
//! subcommand, which reads only the server's address.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

mod options;

pub use options::{Cors, FAIL_CLOSED, HELP, parse_origin};
use options::{OPTS, Opt, shown, switch};

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

impl Config {
    /// The settings that differ from their default, a few words each, for
    /// the start-up summary (the address and the data file are said apart).
    pub fn modes(&self) -> Vec<String> {
        let default = Config::default();
        let default_threads = if self.data.is_some() {
            default.threads.max(DURABLE_THREADS)
        } else {
            default.threads
        };
        let mut modes = Vec::new();
        if self.auth_token.is_some() {
            modes.push("bearer token required on /api".to_string());
        }
        if self.allow_reset {
            modes.push("reset allowed (DELETE on a collection empties it)".into());
        }
        match &self.cors {
            Cors::Any => {}
            Cors::Off => modes.push("CORS off".into()),
            Cors::Origins(origins) => modes.push(format!("CORS only for {}", origins.join(", "))),
        }
        if !self.delay.is_zero() {
            modes.push(format!("delay {} ms", self.delay.as_millis()));
        }
        if self.max_items != default.max_items {
            modes.push(format!("at most {} items per collection", self.max_items));
        }
        if self.max_body_bytes != default.max_body_bytes {
            modes.push(format!("bodies up to {} bytes", self.max_body_bytes));
        }
        if self.threads != default_threads {
            modes.push(format!("{} worker threads", self.threads));
        }
        if let Some(connections) = self.max_connections {
            modes.push(format!("at most {connections} connections"));
        }
        if self.read_timeout != default.read_timeout {
            modes.push(format!("read timeout {} s", self.read_timeout.as_secs()));
        }
        if self.write_timeout != default.write_timeout {
            modes.push(format!("write timeout {} s", self.write_timeout.as_secs()));
        }
        if self.log_level != default.log_level {
            modes.push(format!("log level {}", self.log_level));
        }
        modes
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Box<Config>),
    /// `widgets-todos healthcheck`: ask the server at `host:port` for
    /// `/healthz`.
    Healthcheck {
        host: String,
        port: u16,
    },
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
    /// A value given to a flag that takes none (`--no-cors=1`).
    UnexpectedValue(&'static str),
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
    /// `--no-cors` (or `NO_CORS`) with `--cors-origin` (or `CORS_ORIGINS`),
    /// named as they were given: no CORS, and CORS for some origins.
    CorsContradiction { first: String, second: String },
    /// A data file given as an argument and, with another name, by
    /// `--data` or `DATA_FILE`.
    DataTwice {
        argument: String,
        source: &'static str,
        other: String,
    },
    /// An option of the server given to `healthcheck`.
    NotForHealthcheck(&'static str),
    /// More than one argument that is not an option.
    ExtraArgument { first: String, extra: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownFlag(flag) => write!(f, "unknown option '{flag}' (see --help)"),
            ConfigError::MissingValue(flag) => {
                write!(f, "option '{flag}' needs a value (see --help)")
            }
            ConfigError::UnexpectedValue(flag) => {
                write!(f, "option '{flag}' takes no value: give '{flag}' alone")
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
            ConfigError::CorsContradiction { first, second } => write!(
                f,
                "{first} and {second} contradict each other (no CORS headers at all, or CORS for some origins): give only one"
            ),
            ConfigError::DataTwice {
                argument,
                source,
                other,
            } => write!(
                f,
                "the data file is given twice, as the argument '{argument}' and as {source} '{other}': give it once"
            ),
            ConfigError::NotForHealthcheck(flag) => write!(
                f,
                "healthcheck takes only --host and --port (or HOST and PORT), not {flag}"
            ),
            ConfigError::ExtraArgument { first, extra } => write!(
                f,
                "unexpected argument '{extra}' after the data file '{first}': give one data file; options start with --"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// One option's value as given: by its flag or by its variable.
struct Given<'a> {
    opt: &'a Opt,
    value: String,
    by_flag: bool,
}

impl Given<'_> {
    /// The flag or variable, as a message names it.
    fn name(&self) -> &'static str {
        if self.by_flag {
            self.opt.flag
        } else {
            self.opt.env
        }
    }

    /// Stores the value in `config`, or says what was wrong with it.
    fn apply(&self, config: &mut Config) -> Result<(), ConfigError> {
        (self.opt.set)(config, &self.value).map_err(|expected| ConfigError::BadValue {
            source: if self.by_flag {
                self.opt.flag.to_string()
            } else {
                format!("environment variable {}", self.opt.env)
            },
            value: shown(self.opt, self.value.clone()),
            expected,
        })
    }
}

/// Reads the options: the flags in `args` (without the program name), then
/// the environment (through `env`, so tests need not touch the real one)
/// for every option no flag set. An argument that is not an option names
/// the data file, as `--data` does (`widgets-todos db.json`). A first
/// argument `healthcheck` is the subcommand of that name.
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
    if args.first().is_some_and(|arg| arg == "healthcheck") {
        return parse_healthcheck(args[1..].to_vec(), env);
    }
    // The flags first, only split into options and values, so that the
    // environment is read only for the options no flag sets: a flag wins,
    // and the variable it overrides cannot stop start-up.
    let (mut flags, data_file) = split(args)?;
    if let Some(file) = data_file {
        add_data_argument(&mut flags, file, &env)?;
    }

    let mut given: Vec<Given> = Vec::new();
    for opt in OPTS {
        if flags.iter().any(|flag| same_setting(flag.opt, opt)) {
            continue;
        }
        let Some(value) = env(opt.env) else {
            continue;
        };
        if value.is_empty() {
            if let Some(&(variable, protection)) = FAIL_CLOSED
                .iter()
                .find(|(variable, _)| *variable == opt.env)
            {
                return Err(ConfigError::EmptyProtection {
                    variable,
                    protection,
                });
            }
            // A switch's variable is read even when empty, and refused
            // then: it has no default to fall back on silently.
            if opt.takes_value() {
                continue;
            }
        }
        given.push(Given {
            opt,
            value,
            by_flag: false,
        });
    }
    // The environment first, so that a repeated flag adds to or replaces
    // what it set.
    given.extend(flags);
    check_cors(&given)?;

    let mut config = Config::default();
    for setting in &given {
        setting.apply(&mut config)?;
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
    let explicit_threads = given.iter().any(|setting| setting.opt.flag == "--threads");
    if config.data.is_some() && !explicit_threads {
        // A durable write waits for the disk in its worker; the more writers
        // wait together, the more of them share one fsync.
        config.threads = config.threads.max(DURABLE_THREADS);
    }
    Ok(Command::Serve(Box::new(config)))
}

/// The data file given as an argument (`widgets-todos db.json`), the same
/// as `--data db.json`. Given again with another name, by `--data` or
/// `DATA_FILE`, it is refused rather than one of the two picked.
fn add_data_argument(
    flags: &mut Vec<Given<'static>>,
    file: String,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    if let Some(flag) = flags.iter().find(|given| given.opt.flag == "--data") {
        if flag.value == file {
            return Ok(());
        }
        return Err(ConfigError::DataTwice {
            argument: file,
            source: "--data",
            other: flag.value.clone(),
        });
    }
    if let Some(other) = env("DATA_FILE").filter(|value| !value.is_empty() && *value != file) {
        return Err(ConfigError::DataTwice {
            argument: file,
            source: "DATA_FILE",
            other,
        });
    }
    flags.push(Given {
        opt: opt("--data"),
        value: file,
        by_flag: true,
    });
    Ok(())
}

/// Splits the arguments into options with their values (`--port 8080`,
/// `--port=8080`, a switch alone) and at most one data file.
fn split(args: Vec<String>) -> Result<(Vec<Given<'static>>, Option<String>), ConfigError> {
    let mut flags = Vec::new();
    let mut data_file: Option<String> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if !arg.starts_with('-') {
            if let Some(first) = data_file {
                return Err(ConfigError::ExtraArgument { first, extra: arg });
            }
            data_file = Some(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let opt = OPTS
            .iter()
            .find(|opt| opt.flag == name)
            .ok_or_else(|| ConfigError::UnknownFlag(arg.clone()))?;
        let value = match (opt.takes_value(), inline) {
            (false, Some(_)) => return Err(ConfigError::UnexpectedValue(opt.flag)),
            (false, None) => "true".to_string(),
            (true, Some(value)) => value,
            (true, None) => args.next().ok_or(ConfigError::MissingValue(opt.flag))?,
        };
        flags.push(Given {
            opt,
            value,
            by_flag: true,
        });
    }
    Ok((flags, data_file))
}

/// `--no-cors` (or `NO_CORS` on) with `--cors-origin` (or `CORS_ORIGINS`)
/// asks for no CORS and for CORS at once: refused, not decided by order.
/// (A flag of either leaves both variables unread; see [`same_setting`].)
fn check_cors(given: &[Given]) -> Result<(), ConfigError> {
    let no_cors = given
        .iter()
        .find(|setting| setting.opt.flag == "--no-cors" && switch(&setting.value) == Ok(true));
    let origins = given
        .iter()
        .find(|setting| setting.opt.flag == "--cors-origin");
    match (no_cors, origins) {
        (Some(off), Some(on)) => Err(ConfigError::CorsContradiction {
            first: off.name().to_string(),
            second: on.name().to_string(),
        }),
        _ => Ok(()),
    }
}

/// The options of `widgets-todos healthcheck`: `--host` and `--port`, or
/// `HOST` and `PORT`, as the server reads them, so that the same
/// environment checks the server it started.
fn parse_healthcheck(
    args: Vec<String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Command, ConfigError> {
    let (flags, argument) = split(args)?;
    if let Some(extra) = argument {
        return Err(ConfigError::UnknownFlag(extra));
    }
    if let Some(other) = flags
        .iter()
        .find(|given| !matches!(given.opt.flag, "--host" | "--port"))
    {
        return Err(ConfigError::NotForHealthcheck(other.opt.flag));
    }
    let mut config = Config::default();
    for name in ["--host", "--port"] {
        let opt = opt(name);
        let setting = match flags.iter().find(|given| given.opt.flag == name) {
            Some(flag) => Given {
                opt,
                value: flag.value.clone(),
                by_flag: true,
            },
            None => match env(opt.env).filter(|value| !value.is_empty()) {
                Some(value) => Given {
                    opt,
                    value,
                    by_flag: false,
                },
                None => continue,
            },
        };
        setting.apply(&mut config)?;
        if config.port == 0 {
            return Err(ConfigError::BadValue {
                source: setting.name().to_string(),
                value: "0".into(),
                expected: "the port the server listens on, 1 to 65535",
            });
        }
    }
    Ok(Command::Healthcheck {
        host: config.host,
        port: config.port,
    })
}

/// The option whose flag is `flag` (one of [`OPTS`]).
fn opt(flag: &str) -> &'static Opt {
    match OPTS.iter().find(|opt| opt.flag == flag) {
        Some(opt) => opt,
        None => unreachable!("{flag} is not in OPTS"),
    }
}

/// Whether a flag for option `given` means that `opt`'s variable is not
/// read: the same option, or the other way to give the same setting (the
/// bearer token; CORS).
fn same_setting(given: &Opt, opt: &Opt) -> bool {
    const PAIRS: [[&str; 2]; 2] = [
        ["--auth-token", "--auth-token-file"],
        ["--no-cors", "--cors-origin"],
    ];
    given.flag == opt.flag
        || PAIRS
            .iter()
            .any(|pair| pair.contains(&given.flag) && pair.contains(&opt.flag))
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
    fn a_positional_argument_is_the_data_file() {
        let c = config(&["db.json", "--port", "1"], &[]);
        assert_eq!(c.data, Some(PathBuf::from("db.json")));
        assert!(c.threads >= DURABLE_THREADS);
        // Given twice with the same name is harmless; DATA_FILE is not read.
        let c = config(&["--data", "db.json", "db.json"], &[("DATA_FILE", "")]);
        assert_eq!(c.data, Some(PathBuf::from("db.json")));
        let c = config(&["db.json"], &[("DATA_FILE", "db.json")]);
        assert_eq!(c.data, Some(PathBuf::from("db.json")));
        // A flag's value is not an argument.
        assert_eq!(config(&["--host", "localhost"], &[]).data, None);
        let err = |args: &[&str], env: &[(&str, &str)]| parse_with(args, env).unwrap_err();
        let twice = err(&["a.json", "--data=b.json"], &[]);
        assert!(matches!(
            twice,
            ConfigError::DataTwice {
                source: "--data",
                ..
            }
        ));
        assert!(twice.to_string().contains("give it once"), "{twice}");
        let twice = err(&["a.json"], &[("DATA_FILE", "b.json")]);
        assert!(matches!(
            twice,
            ConfigError::DataTwice {
                source: "DATA_FILE",
                ..
            }
        ));
        let extra = err(&["a.json", "b.json"], &[]).to_string();
        assert!(
            extra.contains("'b.json'") && extra.contains("one data file"),
            "{extra}"
        );
    }

    #[test]
    fn switches_have_variables() {
        for on in ["1", "true", "YES", "True"] {
            let c = config(&[], &[("ALLOW_RESET", on), ("NO_CORS", on)]);
            assert!(c.allow_reset, "{on}");
            assert_eq!(c.cors, Cors::Off, "{on}");
        }
        for off in ["0", "false", "No"] {
            let c = config(&[], &[("ALLOW_RESET", off), ("NO_CORS", off)]);
            assert_eq!((c.allow_reset, c.cors), (false, Cors::Any), "{off}");
        }
        for bad in ["", "on", "2", "y"] {
            let err = parse_with(&[], &[("ALLOW_RESET", bad)])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("ALLOW_RESET") && err.contains("1, true or yes"),
                "{bad}: {err}"
            );
        }
        // The flag wins, and its variable is not read.
        assert!(config(&["--allow-reset"], &[("ALLOW_RESET", "bogus")]).allow_reset);
        assert!(config(&["--allow-reset"], &[("ALLOW_RESET", "0")]).allow_reset);
        let err = parse_with(&["--allow-reset=yes"], &[]).unwrap_err();
        assert_eq!(err, ConfigError::UnexpectedValue("--allow-reset"));
        // NO_CORS=0 leaves an origin list alone.
        let c = config(&[], &[("NO_CORS", "0"), ("CORS_ORIGINS", "http://a.test")]);
        assert_eq!(c.cors, Cors::Origins(vec!["http://a.test".into()]));
    }

    #[test]
    fn no_cors_and_an_origin_list_contradict() {
        let err = parse_with(&["--no-cors", "--cors-origin", "http://a.test"], &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("--no-cors and --cors-origin contradict") && text.contains("only one"),
            "{text}"
        );
        let err = parse_with(&[], &[("NO_CORS", "1"), ("CORS_ORIGINS", "http://a.test")]);
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("NO_CORS and CORS_ORIGINS")
        );
        // A flag of either leaves both variables unread.
        let c = config(&["--cors-origin=http://a.test"], &[("NO_CORS", "1")]);
        assert_eq!(c.cors, Cors::Origins(vec!["http://a.test".into()]));
    }

    #[test]
    fn hosts_must_be_addresses_or_resolve() {
        for good in ["127.0.0.1", "0.0.0.0", "::", "::1", "localhost"] {
            assert_eq!(config(&["--host", good], &[]).host, good);
        }
        for bad in ["999.1.1.1", "1.2.3", "256.0.0.1", " ", "[::1]"] {
            let err = parse_with(&["--host", bad], &[]).unwrap_err().to_string();
            assert!(
                err.contains("--host") && err.contains("IP address"),
                "{bad}: {err}"
            );
        }
        let err = parse_with(&[], &[("HOST", "999.1.1.1")]).unwrap_err();
        assert!(err.to_string().contains("HOST"), "{err}");
    }

    #[test]
    fn healthcheck_takes_host_and_port() {
        let check = |host: &str, port| {
            Ok(Command::Healthcheck {
                host: host.into(),
                port,
            })
        };
        assert_eq!(parse_with(&["healthcheck"], &[]), check("127.0.0.1", 8080));
        assert_eq!(
            parse_with(&["healthcheck"], &[("HOST", "0.0.0.0"), ("PORT", "9000")]),
            check("0.0.0.0", 9000)
        );
        assert_eq!(
            parse_with(&["healthcheck", "--port=81"], &[("PORT", "x")]),
            check("127.0.0.1", 81)
        );
        // Only the server's address: other options, or variables, are not
        // its business (AUTH_TOKEN="" stops a server, not its check).
        assert_eq!(
            parse_with(&["healthcheck"], &[("AUTH_TOKEN", ""), ("MAX_ITEMS", "x")]),
            check("127.0.0.1", 8080)
        );
        let err = parse_with(&["healthcheck", "--data", "x"], &[]).unwrap_err();
        assert!(err.to_string().contains("only --host and --port"), "{err}");
        assert!(parse_with(&["healthcheck", "--port", "0"], &[]).is_err());
        assert!(parse_with(&["healthcheck", "extra"], &[]).is_err());
    }

    #[test]
    fn help_lists_every_option_and_fits_one_screen() {
        for opt in OPTS {
            assert!(HELP.contains(opt.flag), "--help lacks {}", opt.flag);
            assert!(HELP.contains(opt.env), "--help lacks {}", opt.env);
        }
        assert!(HELP.lines().count() <= 24);
        for line in HELP.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
    }

    #[test]
    fn modes_name_what_differs_from_the_defaults() {
        assert!(config(&[], &[]).modes().is_empty());
        assert!(config(&["--data", "x.json"], &[]).modes().is_empty());
        let args = [
            "--allow-reset",
            "--no-cors",
            "--delay=250",
            "--max-items=10",
            "--auth-token=t",
            "--threads=1000",
        ];
        let modes = config(&args, &[]).modes().join("; ");
        for mode in [
            "bearer token",
            "reset allowed",
            "CORS off",
            "delay 250 ms",
            "at most 10 items",
            "1000 worker threads",
        ] {
            assert!(modes.contains(mode), "{mode}: {modes}");
        }
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
