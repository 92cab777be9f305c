//! The data files on disk: where the journal and temporary files go, the
//! symbolic links a name may be, how a file is replaced whole, keeping
//! its mode, so that a crash at any moment leaves the old file or the new,
//! and the snapshot's layout.
//!
//! The files of `--data PATH` (how they are written: `journal.rs`):
//!
//! - `PATH`, the **snapshot**: one JSON document, an item per line.
//!   `{"seq": 42, "lastId": {"widgets": 3, "todos": 9}, "widgets": [...],
//!   "todos": [...]}`. `seq` is the last journal record it includes;
//!   `lastId` the highest id each collection ever handed out. A
//!   hand-written `{"widgets": [...], "todos": [...]}` is a valid snapshot.
//! - `PATH.journal`, the **journal**: JSON Lines, one record per change
//!   since the snapshot, in the order the changes happened:
//!   `{"seq":43,"op":"put","collection":"todos","item":{...}}` (a create or
//!   an update: the whole item as it now is) or
//!   `{"seq":44,"op":"delete","collection":"todos","id":9}`, or, with
//!   `--allow-reset`, `{"seq":45,"op":"clear","collection":"todos"}`.
//!
//! Either name may be a symbolic link: the file it points to is the one
//! read and rewritten (`resolve`), and a rewritten file keeps the mode of
//! the one it replaces (`create_replacement`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

pub(super) fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// Where `--watch` keeps an edit of the snapshot that does not load.
pub(super) fn rejected_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".rejected");
    PathBuf::from(name)
}

pub(super) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// The file `path` names once symbolic links are followed (only the last
/// component needs it: the directories are the same whatever their path).
/// A file is replaced by renaming a new one over it, and a rename replaces
/// whatever has the name, link or file: so the target is what must be
/// replaced, by a new file beside it (a rename cannot cross file systems).
/// The target need not exist yet. The links are read once, at start-up.
pub(super) fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    // As many links in a row as Linux follows before ELOOP.
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Creates `path.tmp`, empty, to be renamed over `path`: with `path`'s
/// permissions when it exists, so that a rewritten file keeps its mode (a
/// private file stays private, and the umask narrows nothing). It is
/// created no wider than that and set exactly before anything is written.
pub(super) fn create_replacement(path: &Path) -> io::Result<(PathBuf, File)> {
    let tmp = tmp_path(path);
    let kept = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(true);
    if let Some(permissions) = &kept {
        options.mode(permissions.mode() & 0o7777);
    }
    let file = options.open(&tmp)?;
    if let Some(permissions) = kept {
        // `mode` above applies only to a new file, less the umask.
        file.set_permissions(permissions)?;
    }
    Ok((tmp, file))
}

/// Fsyncs the directory holding `path`, which makes a file created or
/// renamed there durable (the file's own fsync does not cover its name).
pub(super) fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// Writes `path` whole or not at all: to `path.tmp`, fsync, rename over
/// `path`, fsync the directory. Returns the written file's metadata (what
/// is at `path` now may already be another program's).
pub(super) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<fs::Metadata> {
    let (tmp, file) = create_replacement(path)?;
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    let written = file.metadata()?;
    fs::rename(&tmp, path)?;
    sync_dir(path)?;
    Ok(written)
}

/// Makes the data files ready once they have loaded, and opens the journal
/// to append to. A missing or empty (0-byte, made by hand) snapshot loads
/// as an empty store: one that says so is written, so that the files are
/// whole from the start (the journal, if any, still holds the rest); only
/// now, so that a failed start changes no file.
pub(super) fn open_files(snapshot: &Path, journal: &Path) -> Result<File, String> {
    let missing = fs::metadata(snapshot).map_or(true, |meta| meta.len() == 0);
    if missing {
        let empty = Snapshot::<(), ()> {
            seq: 0,
            widgets: (0, Vec::new()),
            todos: (0, Vec::new()),
        };
        write_atomically(snapshot, |out| write_snapshot(out, &empty))
            .map_err(|err| cannot("create", snapshot, &err))?;
    }
    for leftover in [tmp_path(snapshot), tmp_path(journal)] {
        // A compaction interrupted before its rename; never read.
        let _ = fs::remove_file(leftover);
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)
        .map_err(|err| cannot("open", journal, &err))?;
    for file in [snapshot, journal] {
        sync_dir(file)
            .map_err(|err| format!("cannot sync the directory of {}: {err}", file.display()))?;
    }
    Ok(file)
}

/// A new journal holding `records`, renamed over the one at `path`
/// (`renamed` says whether the name is the new file's). It is opened before
/// it takes the name, so that once the rename is done there is a handle on
/// it to append to.
pub(super) fn replace_journal(path: &Path, records: &[u8], renamed: &mut bool) -> io::Result<File> {
    let (tmp, mut fresh) = create_replacement(path)?;
    fresh.write_all(records)?;
    fresh.sync_all()?;
    fs::rename(&tmp, path)?;
    *renamed = true;
    sync_dir(path)?;
    Ok(fresh)
}

/// `cannot DO PATH: ERROR`, and, when the error is a permission refused,
/// who the server runs as and the two ways out: a data directory is most
/// often refused to a container's user (65534 in the image), whose uid a
/// bare "Permission denied" does not name.
pub(super) fn cannot(what: &str, path: &Path, err: &io::Error) -> String {
    let mut message = format!("cannot {what} {}: {err}", path.display());
    if err.kind() == io::ErrorKind::PermissionDenied {
        // The owner of /proc/self is the process's effective user.
        let (uid, gid) = fs::metadata("/proc/self").map_or((None, None), |meta| {
            use std::os::unix::fs::MetadataExt;
            (Some(meta.uid()), Some(meta.gid()))
        });
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        if let (Some(uid), Some(gid)) = (uid, gid) {
            message.push('\n');
            message.push_str(&permission_fix(uid, gid, dir, in_container()));
        }
    }
    message
}

/// A snapshot to write: borrowed items, serialized outside every lock.
pub struct Snapshot<W, T> {
    pub seq: u64,
    pub widgets: (u64, Vec<W>),
    pub todos: (u64, Vec<T>),
}

/// The snapshot format: one item per line, so that it reads (and diffs)
/// well.
pub(super) fn write_snapshot<W: Serialize, T: Serialize>(
    out: &mut impl Write,
    snapshot: &Snapshot<W, T>,
) -> io::Result<()> {
    let (last_widget, widgets) = &snapshot.widgets;
    let (last_todo, todos) = &snapshot.todos;
    writeln!(
        out,
        "{{\"seq\": {}, \"lastId\": {{\"widgets\": {last_widget}, \"todos\": {last_todo}}},",
        snapshot.seq
    )?;
    write_items(out, "widgets", widgets)?;
    out.write_all(b",\n")?;
    write_items(out, "todos", todos)?;
    out.write_all(b"}\n")
}

/// `"name": [` and the items, one a line: the snapshot's layout, which
/// `widgets-todos import` writes too.
pub(crate) fn write_items<I: Serialize>(
    out: &mut impl Write,
    name: &str,
    items: &[I],
) -> io::Result<()> {
    write!(out, "\"{name}\": [")?;
    for (n, item) in items.iter().enumerate() {
        out.write_all(if n == 0 { b"\n" } else { b",\n" })?;
        serde_json::to_writer(&mut *out, item)?;
    }
    out.write_all(if items.is_empty() { b"]" } else { b"\n]" })
}

/// Whether the server runs as a container's first process, as the image
/// runs it (`scripts/container/Dockerfile`); the start-up summary reads it
/// so too (`main.rs`). A server started inside a development container
/// is not: its directories may well be the container's own.
fn in_container() -> bool {
    std::process::id() == 1
}

/// What to do about a directory `dir` the user `uid:gid` may not write.
/// In a container, `dir` is a path of the container's own: the fix is on
/// the host, to the directory mounted there, which the server cannot see.
fn permission_fix(uid: u32, gid: u32, dir: &Path, in_container: bool) -> String {
    let dir = dir.display();
    if in_container {
        format!(
            "the server runs as uid {uid}, gid {gid}, which may not write there; {dir} is a path \
             inside the container: on the host, give it the directory mounted there (HOST_DIR in \
             docker run -v HOST_DIR:{dir}), as root: chown -R {uid}:{gid} HOST_DIR; or run the \
             container as that directory's owner: docker run --user \"$(id -u):$(id -g)\" ..."
        )
    } else {
        format!(
            "the server runs as uid {uid}, gid {gid}, which may not write there: give it the \
             directory, as root: chown -R {uid}:{gid} {dir}; or run the server as the \
             directory's owner"
        )
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
