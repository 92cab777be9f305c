//! A command line the server does not understand is refused with exit
//! status 2 and a sentence saying what to type, and creates no file: a
//! word where the data file goes (`help`, `serve`), json-server's flags,
//! misspelt flags.

use std::process::Command;

use crate::cli::BIN;
use crate::support::TempDir;

/// Runs the binary in a fresh directory; its exit code, its stderr, and
/// the names in the directory afterwards.
fn refused(args: &[&str]) -> (Option<i32>, String, Vec<String>) {
    let dir = TempDir::new("cli-hints");
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .current_dir(&dir.0)
        .output()
        .expect("run the binary");
    let files = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        files,
    )
}

#[test]
fn a_word_where_the_data_file_goes_is_refused_with_what_to_type() {
    for (args, said) in [
        (&["help"][..], "for help: widgets-todos --help"),
        (
            &["serve"],
            "to serve, give no command: widgets-todos alone serves",
        ),
        (&["start", "--port", "0"], "to serve, give no command"),
        (&["version"], "for the version: widgets-todos --version"),
        (
            &["db"],
            "a name ending in .json (widgets-todos db.json, or --data db for any name)",
        ),
    ] {
        let (code, stderr, files) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is neither an existing file nor a .json file name"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(files.is_empty(), "{args:?} created {files:?}");
    }
}

/// json-server's flags that mean nothing here are refused, one sentence
/// each; those it shares are options here (`json_server_cli.rs`).
#[test]
fn json_server_flags_that_cannot_apply_say_what_to_use_here() {
    for (args, said) in [
        (
            &["--routes", "routes.json"][..],
            "the collections are always /api/todos and /api/widgets",
        ),
        (&["-r", "routes.json"], "there are no custom routes"),
        (&["--static", "./public"], "there are no static files"),
        (&["-s", "./public"], "there are no static files"),
        (&["--middlewares", "m.js"], "there are no middlewares"),
        (
            &["--snapshots", "./snaps"],
            "there are no snapshots to ask for",
        ),
        (&["--id", "_id"], "the id is always \"id\" here"),
        (
            &["--fks", "Id"],
            "there are no relations between collections here",
        ),
        (&["-v"], "the version is -V or --version here"),
    ] {
        let (code, stderr, files) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(files.is_empty(), "{args:?} created {files:?}");
    }
}

#[test]
fn a_misspelt_flag_gets_did_you_mean() {
    for (arg, meant) in [
        ("--prot", "--port"),
        ("--max-item=5", "--max-items"),
        ("--alow-reset", "--allow-reset"),
        ("--Data", "--data"),
        ("--hlep", "--help"),
    ] {
        let (code, stderr, _) = refused(&[arg]);
        assert_eq!(code, Some(2), "{arg}: {stderr}");
        assert!(
            stderr.contains(&format!("did you mean {meant}?")),
            "{arg}: {stderr}"
        );
    }
    let (code, stderr, _) = refused(&["--frobnicate"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("unknown option '--frobnicate' (see --help)"),
        "{stderr}"
    );
}

#[test]
fn a_json_name_or_an_existing_file_is_still_the_data_file() {
    let dir = TempDir::new("cli-data-arg");
    let plain = dir.join("data");
    std::fs::write(&plain, "").unwrap();
    for arg in [plain.to_str().unwrap(), "DB.JSON"] {
        let parsed = widgets_todos::config::parse([arg.to_string()], |_| None);
        assert!(
            matches!(parsed, Ok(widgets_todos::config::Command::Serve(_))),
            "{arg}: {parsed:?}"
        );
    }
}
