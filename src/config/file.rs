//! `--config FILE` (json-server's `-c json-server.json`): a JSON object
//! whose keys are options, as json-server reads its own file. A key is an
//! option's flag without its dashes, in json-server's camelCase or in
//! kebab-case (`readOnly`, `read-only`), or one of json-server's short
//! names (`p`, `ro`); its value a string, a number, or a boolean for a
//! switch. Each value is checked here, so that a bad one is named by its
//! key and its file; the keys are then given as the options they name.
//! A key of json-server's that does not apply here (`routes`, `static`)
//! is refused with the sentence its flag gets, and any other unknown key
//! with the key meant: a file that says something this server would not
//! do is exit status 2, never half applied.

use serde_json::{Map, Value};

use super::options::{ALIASES, OPTS, Opt, shown};
use super::{Config, ConfigError, Given, hints};
use crate::model::spelling;

/// The largest configuration file read, in bytes: every option with a
/// long value fits many times over.
const MOST: u64 = 64 * 1024;

/// The options the keys of the JSON object in `path` give, in the file's
/// order; or why the file cannot be used.
pub(super) fn read(path: &str) -> Result<Vec<Given<'static>>, ConfigError> {
    let failed = |why: String| ConfigError::ConfigFile(format!("configuration file {path}: {why}"));
    // Only a regular file, and no more of it than a file of options needs:
    // a FIFO would block start-up, `/dev/zero` never end.
    let metadata =
        std::fs::metadata(path).map_err(|err| failed(format!("cannot read it: {err}")))?;
    if !metadata.is_file() || metadata.len() > MOST {
        return Err(failed(format!(
            "not a regular file of at most {MOST} bytes"
        )));
    }
    let text =
        std::fs::read_to_string(path).map_err(|err| failed(format!("cannot read it: {err}")))?;
    let object: Map<String, Value> = serde_json::from_str(&text).map_err(|err| {
        failed(format!(
            "not a JSON object of options such as {{\"port\": 3000}} ({err})"
        ))
    })?;
    let mut given = Vec::new();
    for (key, value) in object {
        let opt = option(&key).ok_or_else(|| failed(unknown_key(&key)))?;
        let value = text_of(opt, &value).ok_or_else(|| {
            let expected = if opt.takes_value() {
                "a string or a number"
            } else {
                "true or false"
            };
            failed(format!(
                "the value of \"{key}\" must be {expected}, not {value}"
            ))
        })?;
        // Checked now, so that the message names the key and the file.
        opt.set(&mut Config::default(), &value)
            .map_err(|expected| ConfigError::BadValue {
                source: format!("\"{key}\" in {path}"),
                value: shown(opt, value.clone()),
                expected,
            })?;
        given.push(Given {
            opt,
            value,
            by_flag: true,
        });
    }
    Ok(given)
}

/// The option a key names: `port`, `readOnly`, `read-only`, `ro`. A file
/// naming another file (`config`) is not followed.
fn option(key: &str) -> Option<&'static Opt> {
    let kebab = kebab(key);
    let flag = ALIASES
        .iter()
        .find(|(alias, _)| alias.trim_start_matches('-') == key)
        .map_or(kebab.as_str(), |(_, flag)| flag);
    OPTS.iter()
        .find(|opt| opt.flag == flag && opt.flag != "--config")
}

/// The flag a key spells in camelCase: `readOnly` is `--read-only`.
fn kebab(key: &str) -> String {
    let mut flag = String::from("--");
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            flag.push('-');
        }
        flag.push(c.to_ascii_lowercase());
    }
    flag
}

/// A value as its flag would take it: a switch takes a boolean, any other
/// option a string or a number.
fn text_of(opt: &Opt, value: &Value) -> Option<String> {
    match value {
        Value::Bool(on) if !opt.takes_value() => Some(on.to_string()),
        Value::String(text) if opt.takes_value() => Some(text.clone()),
        Value::Number(n) if opt.takes_value() => Some(n.to_string()),
        _ => None,
    }
}

/// What to say about a key that names no option here.
fn unknown_key(key: &str) -> String {
    for flag in [format!("--{key}"), format!("-{key}"), kebab(key)] {
        if let Some(hint) = hints::json_server(&flag) {
            return format!("\"{key}\" does not apply here: {hint}");
        }
    }
    let keys: Vec<&str> = OPTS
        .iter()
        .map(|opt| opt.flag.trim_start_matches('-'))
        .filter(|&name| name != "config")
        .collect();
    match spelling::closest(key, &keys) {
        Some(meant) => format!("unknown key \"{key}\": did you mean \"{meant}\"?"),
        None => format!(
            "unknown key \"{key}\": the keys are the options of --help, without their dashes"
        ),
    }
}
