//! Command-line flags and environment variables, turned into a [`Config`].
//!
//! Every option has a flag and an environment variable; the flag wins, and
//! the variable of an option a flag sets is not read at all. A bad flag or
//! value is a [`ConfigError`], which `main` prints as one line and turns
//! into exit status 2. An environment variable set to the empty string
//! counts as unset, as container tools often pass empty variables through;
//! except a variable that switches a protection on ([`FAIL_CLOSED`]): set
//! but empty, it is refused, never read as "off"; and a switch's variable
//! (`NO_CORS`, `ALLOW_RESET`, `FAULTS`), which takes only the words of
//! `options::switch`. An argument that is not an option is the data file
//! (`widgets-todos db.json`); a first argument `healthcheck` is that
//! subcommand, which reads only the server's address. json-server's
//! spellings of the options it shares (`-p`, `--ro`) name the same
//! options (`options::ALIASES`), and a `--config` file's keys count as
//! flags given before the command line's (`file.rs`).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::model::generate::Spec;

mod commands;
pub mod fault_settings;
mod file;
mod hints;
mod modes;
mod options;

use commands::{parse_healthcheck, parse_import};
use options::{ALIASES, OPTS, Opt, shown, switch};
pub use options::{Cors, FAIL_CLOSED, HELP, MAX_RECORD, parse_origin};

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
    /// How long a connection that has answered a request may wait for the
    /// next before it is closed (`--keep-alive-timeout`).
    pub keep_alive_timeout: Duration,
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
    /// `--max-subscribers`: how many clients `/api/events` streams to at
    /// once (each holds one of the connections); 0 turns it off.
    pub max_subscribers: usize,
    /// `--events-kept`: how many of the last events `/api/events` keeps
    /// for subscribers that resume or lag; `None` for the feed's default
    /// (`store/feed.rs`).
    pub events_kept: Option<usize>,
    /// `--generate`: how many items to make at start-up in an empty store.
    pub generate: Option<Spec>,
    /// `--seed`: the same seed generates the same items.
    pub seed: u64,
    /// `--record N`: keep the last N requests for `/_admin/requests`.
    pub record: Option<usize>,
    /// `--faults`, `--fail-rate`, `--fail-status`: failure on purpose.
    pub faults: fault_settings::FaultSettings,
    /// `--watch`, `-w`: load an edit of the data file made by another program.
    pub watch: bool,
    /// `--read-only`, `--ro`: only reads; every write is refused (405).
    pub read_only: bool,
    /// `--quiet`, `-q`: no access-log lines.
    pub quiet: bool,
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
            keep_alive_timeout: Duration::from_secs(30),
            data: None,
            cors: Cors::Any,
            allow_reset: false,
            delay: Duration::ZERO,
            auth_token: None,
            tls: None,
            max_connections: None,
            max_subscribers: 64,
            events_kept: None,
            generate: None,
            seed: 0,
            record: None,
            faults: fault_settings::FaultSettings::default(),
            watch: false,
            read_only: false,
            quiet: false,
        }
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
    /// `widgets-todos import DB.json --out DATA.json`: a json-server file
    /// made into a data file.
    Import {
        from: PathBuf,
        out: PathBuf,
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
    /// `--generate` asks for more items of a collection than `--max-items`
    /// lets it hold.
    TooManyToGenerate {
        collection: &'static str,
        count: usize,
        max_items: usize,
    },
    /// More than one argument that is not an option.
    ExtraArgument { first: String, extra: String },
    /// An argument that is neither an existing file nor a `.json` name
    /// (`help`, `serve`), where the data file would be.
    NotADataFile(String),
    /// `import` without the file to read or the file to write.
    ImportNeeds(&'static str),
    /// A `--config` file that cannot be read, or a key of it that does not
    /// apply here: the whole sentence (`file.rs`).
    ConfigFile(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownFlag(flag) => f.write_str(&hints::unknown_flag(flag)),
            ConfigError::NotADataFile(arg) => f.write_str(&hints::not_a_data_file(arg)),
            ConfigError::ConfigFile(why) => f.write_str(why),
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
            ConfigError::TooManyToGenerate {
                collection,
                count,
                max_items,
            } => write!(
                f,
                "--generate asks for {count} {collection}, but a collection holds at most {max_items} (--max-items): ask for fewer, or raise --max-items"
            ),
            ConfigError::ExtraArgument { first, extra } => write!(
                f,
                "unexpected argument '{extra}' after the data file '{first}': give one data file; options start with --"
            ),
            ConfigError::ImportNeeds(what) => write!(
                f,
                "import needs {what}: widgets-todos import db.json --out data.json"
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
        self.opt
            .set(config, &self.value)
            .map_err(|expected| ConfigError::BadValue {
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
    match args.first().map(String::as_str) {
        Some("healthcheck") => return parse_healthcheck(args[1..].to_vec(), env),
        Some("import") => return parse_import(args[1..].to_vec()),
        _ => {}
    }
    // The flags first, only split into options and values, so that the
    // environment is read only for the options no flag sets: a flag wins,
    // and the variable it overrides cannot stop start-up.
    let (mut flags, data_file) = split(args)?;
    // A `--config` file's keys count as flags given before the command
    // line's: a flag wins over the file, the file over the environment.
    let config_file = match flags.iter().rev().find(|f| f.opt.flag == "--config") {
        Some(flag) => Some(flag.value.clone()),
        None => env("CONFIG_FILE").filter(|value| !value.is_empty()),
    };
    if let Some(path) = config_file {
        flags.splice(0..0, file::read(&path)?);
    }
    if let Some(file) = data_file {
        if !hints::is_data_file(&file) {
            return Err(ConfigError::NotADataFile(file));
        }
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
    check_generate(&config)?;
    fault_settings::check(&config, &given)?;
    let explicit_threads = given.iter().any(|setting| setting.opt.flag == "--threads");
    if config.data.is_some() && !explicit_threads {
        // A durable write waits for the disk in its worker; the more writers
        // wait together, the more of them share one fsync.
        config.threads = config.threads.max(DURABLE_THREADS);
    }
    Ok(Command::Serve(Box::new(config)))
}

/// A `--generate` spec asks for no more items than `--max-items` allows
/// (checked once every option is read, as either may come first).
fn check_generate(config: &Config) -> Result<(), ConfigError> {
    let Some(spec) = config.generate else {
        return Ok(());
    };
    for (collection, count) in [("todos", spec.todos), ("widgets", spec.widgets)] {
        if count > config.max_items {
            return Err(ConfigError::TooManyToGenerate {
                collection,
                count,
                max_items: config.max_items,
            });
        }
    }
    Ok(())
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
        let name = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name, |(_, flag)| flag);
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
#[path = "config_tests.rs"]
mod tests;
