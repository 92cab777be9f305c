//! What to say about a command line this server does not understand: a
//! flag of json-server's (what to use here instead), a misspelt flag
//! ("did you mean"), and a word where a data file was expected (`help`,
//! `serve`). Each is refused with exit status 2; the message says what
//! to type.

use std::path::Path;

use super::options::OPTS;
use crate::model::spelling;

/// json-server 0.17's flags that mean nothing here, each with what to use
/// instead; those it shares with this server are options here, under its
/// spellings too (`options::ALIASES`).
const JSON_SERVER: &[(&[&str], &str)] = &[
    (&["-v"], "the version is -V or --version here"),
    (
        &["-r", "--routes"],
        "there are no custom routes: the collections are always /api/todos and /api/widgets",
    ),
    (
        &["-m", "--middlewares"],
        "there are no middlewares; --delay, --auth-token, --faults and --record cover their usual uses",
    ),
    (
        &["-s", "--static"],
        "there are no static files: serve them from your front-end's own server (CORS is on by default)",
    ),
    (
        &["--ng", "--no-gzip"],
        "responses are never compressed here: leave --no-gzip out",
    ),
    (
        &["-S", "--snapshots"],
        "there are no snapshots to ask for: with --data every write is in the data file",
    ),
    (
        &["-i", "--id"],
        "the id is always \"id\" here: leave --id out",
    ),
    (
        &["--fks", "--foreignKeySuffix"],
        "there are no relations between collections here: leave --foreignKeySuffix out",
    ),
];

/// What to use here instead of json-server's flag `flag` (`--routes`),
/// when it is one of those that do not apply.
pub(super) fn json_server(flag: &str) -> Option<&'static str> {
    JSON_SERVER
        .iter()
        .find(|(flags, _)| flags.contains(&flag))
        .map(|(_, hint)| *hint)
}

/// What to say about the unknown flag `arg` (`--prot`, `-p`, `--watch`):
/// what to use instead, or the flag meant, or where the flags are listed.
pub(super) fn unknown_flag(arg: &str) -> String {
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    if let Some(hint) = json_server(name) {
        return format!("unknown option '{name}': {hint}");
    }
    let mut known: Vec<&str> = OPTS.iter().map(|opt| opt.flag).collect();
    known.extend(["--help", "--version"]);
    match spelling::closest(name, &known) {
        Some(meant) => format!("unknown option '{name}': did you mean {meant}? (see --help)"),
        None => format!("unknown option '{name}' (see --help)"),
    }
}

/// An argument that is not an option names the data file, as in
/// json-server (`widgets-todos db.json`); but only an existing file or a
/// `.json` name, so that a word meant as a command (`help`, `serve`) is
/// refused with what to type, not served with a new file of that name.
pub(super) fn is_data_file(arg: &str) -> bool {
    let path = Path::new(arg);
    let json = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    json || path.is_file()
}

/// What to say about an argument that [`is_data_file`] refused.
pub(super) fn not_a_data_file(arg: &str) -> String {
    let what = match arg {
        "help" | "h" | "?" => "for help: widgets-todos --help".to_string(),
        "version" => "for the version: widgets-todos --version".to_string(),
        "serve" | "start" | "run" | "server" => "to serve, give no command: widgets-todos alone \
             serves with the data in memory, widgets-todos db.json keeps it in db.json"
            .to_string(),
        _ => format!(
            "a data file is a file that exists or a name ending in .json (widgets-todos {arg}.json, \
             or --data {arg} for any name); the commands are healthcheck and import; see --help"
        ),
    };
    format!("'{arg}' is neither an existing file nor a .json file name: {what}")
}
