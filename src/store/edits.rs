//! An edit of the data file by another program while the server runs.
//!
//! The server reads its data file once, at start-up, and from then on owns
//! it: every change goes to the journal, and the file is replaced with the
//! server's data at each compaction and at a clean stop. json-server users
//! are used to editing `db.json` while it runs (`--watch`); here such an
//! edit cannot be applied (the journal's records follow the file as the
//! server read it), so it is lost. It must never be lost silently: the
//! compaction thread looks at the file every [`LOOK_EVERY`] and logs an
//! edit as soon as it sees one, with what will happen to it, and the
//! compaction that replaces it says so again.
//!
//! An edit is any change of the file's identity, size or modification
//! time since the server last read or wrote it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How often the compaction thread looks at the data file.
pub(super) const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What tells one version of a file from another, short of reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = fs::metadata(path).ok()?;
    Some(Stamp {
        device: meta.dev(),
        inode: meta.ino(),
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// The data file as the server last read or wrote it, and the last edit
/// already logged.
pub(super) struct Edits {
    path: PathBuf,
    stamps: Mutex<(Option<Stamp>, Option<Stamp>)>,
}

impl Edits {
    /// Call once the server has read (or written) the file at `path`.
    pub(super) fn new(path: &Path) -> Edits {
        Edits {
            path: path.to_path_buf(),
            stamps: Mutex::new((stamp(path), None)),
        }
    }

    /// Logs an edit not logged before, saying what will happen to it;
    /// whether it did.
    pub(super) fn look(&self) -> bool {
        let mut stamps = self.stamps.lock().unwrap_or_else(|e| e.into_inner());
        let (ours, logged) = *stamps;
        let now = stamp(&self.path);
        if now == ours || now == logged {
            return false;
        }
        stamps.1 = now;
        log::warn!(target: crate::logging::LOG, "{} was changed by another program while the server runs: the server does not read \
             it again, and replaces it with its own data at its next snapshot (at the latest when \
             it stops), so that change will be lost. To change the data, use the API; or stop the \
             server, edit the file, and start it again",
            self.path.display()
        );
        true
    }

    /// Call just before the server replaces the file: says so if that
    /// loses an edit; whether it did.
    pub(super) fn before_replacing(&self) -> bool {
        let stamps = self.stamps.lock().unwrap_or_else(|e| e.into_inner());
        let edited = stamp(&self.path) != stamps.0;
        if edited {
            log::warn!(target: crate::logging::LOG, "{}: the change another program made to it while the server ran is lost: \
                 replaced with the server's data",
                self.path.display()
            );
        }
        edited
    }

    /// Call once the server has replaced the file.
    pub(super) fn replaced(&self) {
        let mut stamps = self.stamps.lock().unwrap_or_else(|e| e.into_inner());
        *stamps = (stamp(&self.path), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_told_once_and_the_server_own_writes_never() {
        let dir = std::env::temp_dir().join(format!("widgets-todos-edits-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.json");
        fs::write(&path, "{}").unwrap();
        let edits = Edits::new(&path);
        assert!(!edits.look(), "nothing changed");

        // The server's own replacement, as a compaction makes it.
        assert!(!edits.before_replacing());
        super::super::files::write_atomically(&path, |out| {
            std::io::Write::write_all(out, b"{\"todos\": []}")
        })
        .unwrap();
        edits.replaced();
        assert!(!edits.look(), "the server's own write is no edit");

        // Another program's edit: told once, and again when replaced.
        fs::write(&path, "{\"todos\": [], \"widgets\": []}").unwrap();
        assert!(edits.look());
        assert!(!edits.look(), "the same edit is told once");
        assert!(edits.before_replacing());
        edits.replaced();
        assert!(!edits.look());
        fs::remove_dir_all(&dir).unwrap();
    }
}
