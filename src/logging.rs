//! The server's log on stderr, written by simple_logger (`main.rs` sets it
//! up; the access log writes its own lines in the same shape).

/// The target of the log's lines at `info` and above: the program's name,
/// where simple_logger would print the module's path
/// (`[widgets_todos::store::journal]`), which a person reading the log does
/// not need. `debug` and `trace` lines keep their module's path, to find the
/// code.
pub const LOG: &str = "widgets-todos";
