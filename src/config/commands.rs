//! The subcommands: `healthcheck`, which reads only the server's address,
//! and `import`, which reads a json-server file and writes a data file.

use std::path::PathBuf;

use super::{Command, Config, ConfigError, Given, opt, split};

/// The options of `widgets-todos healthcheck`: `--host` and `--port`, or
/// `HOST` and `PORT`, as the server reads them, so that the same
/// environment checks the server it started.
pub(super) fn parse_healthcheck(
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

/// The arguments of `widgets-todos import`: the json-server file to read,
/// and `--out PATH`, the data file to write, in any order.
pub(super) fn parse_import(args: Vec<String>) -> Result<Command, ConfigError> {
    let mut from = None;
    let mut out = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if let Some(value) = arg.strip_prefix("--out=") {
            out = Some(value.to_string());
        } else if arg == "--out" {
            out = Some(args.next().ok_or(ConfigError::MissingValue("--out"))?);
        } else if arg.starts_with('-') {
            return Err(ConfigError::UnknownFlag(arg));
        } else if from.is_some() {
            return Err(ConfigError::ImportNeeds(
                "one json-server file to read, and --out before the file to write",
            ));
        } else {
            from = Some(arg);
        }
    }
    let from = from.ok_or(ConfigError::ImportNeeds("the json-server file to read"))?;
    let out = out
        .filter(|out| !out.is_empty())
        .ok_or(ConfigError::ImportNeeds(
            "--out PATH, the data file to write",
        ))?;
    Ok(Command::Import {
        from: PathBuf::from(from),
        out: PathBuf::from(out),
    })
}
