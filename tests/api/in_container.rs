//! What the server says in a container, where the command line is the
//! image's and the data file is the variable DATA_FILE: the start-up
//! summary names the variable, not a file argument.

use crate::cli::{spawn, stop_with};

#[test]
fn without_data_the_summary_says_how_to_keep_it_where_it_runs() {
    // In the image DATA_FILE is set; `-e DATA_FILE=` empties it.
    let (child, _) = spawn(&["--port", "0"], &[("DATA_FILE", "")]);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("data: in memory only, lost at exit (to keep it: set DATA_FILE to a file on a volume, such as /data/db.json)"),
        "{log}"
    );
    assert!(!log.contains("widgets-todos db.json"), "{log}");

    // On a command line, the file argument.
    let (child, _) = spawn(&["--port", "0"], &[]);
    let (code, log) = stop_with(child, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("data: in memory only, lost at exit (to keep it: widgets-todos db.json)"),
        "{log}"
    );
}
