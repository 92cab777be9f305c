//! The snapshot changed by another program while the server runs.
//!
//! The server reads its data files at start-up, and from then on owns
//! them: every change goes to the journal, and the snapshot is replaced
//! with the server's data at each compaction. Another program may still
//! change the snapshot: an editor's save (json-server users edit `db.json`
//! while it runs), a sync tool, a back-up restored, `rm`. The compaction
//! thread looks at it every [`LOOK_EVERY`] and, on a change, makes the
//! files hold what the server acknowledged again (`compaction.rs`): with
//! `--watch` it loads the edit, or, when the edit does not load, writes
//! its own data back; without, it writes its own data back. Never
//! silently: each is logged. (The journal is looked at by `journal.rs`,
//! which holds the file it appends to.)
//!
//! A change is any change of the file's identity (device and inode: a
//! rename over it), size or modification time, or its deletion, since the
//! server last read or wrote it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How often the compaction thread looks at the data files.
pub(super) const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long a changed file must stay unchanged before it is read or
/// written over: an editor that writes in place may be halfway through.
const SETTLE: Duration = Duration::from_millis(200);

/// What tells one version of a file from another, short of reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

/// The file at `path` now, `None` when there is none.
pub(super) fn stamp(path: &Path) -> Option<Stamp> {
    let meta = fs::metadata(path).ok()?;
    Some(Stamp {
        device: meta.dev(),
        inode: meta.ino(),
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// How the snapshot was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edit {
    Deleted,
    /// Replaced, written or cut: another version is at its name.
    Changed(Stamp),
}

/// The snapshot as the server last read or wrote it.
pub(super) struct Edits {
    path: PathBuf,
    ours: Mutex<Option<Stamp>>,
}

impl Edits {
    /// Call once the server has read (or written) the file at `path`.
    pub(super) fn new(path: &Path) -> Edits {
        Edits {
            path: path.to_path_buf(),
            ours: Mutex::new(stamp(path)),
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// A change since the server last read or wrote the file, once it has
    /// settled; `None` when there is none (yet). The change counts as
    /// known from then on: the caller loads it or writes over it.
    pub(super) fn look(&self) -> Option<Edit> {
        let now = stamp(&self.path);
        if now == *self.ours() {
            return None;
        }
        std::thread::sleep(SETTLE);
        if stamp(&self.path) != now {
            return None;
        }
        *self.ours() = now;
        Some(now.map_or(Edit::Deleted, Edit::Changed))
    }

    /// Call just before the server replaces the file: says so if that
    /// loses a change not yet seen by [`Edits::look`]; whether it did.
    pub(super) fn before_replacing(&self) -> bool {
        let edited = stamp(&self.path) != *self.ours();
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
        *self.ours() = stamp(&self.path);
    }

    fn ours(&self) -> std::sync::MutexGuard<'_, Option<Stamp>> {
        self.ours.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_told_once_and_the_server_own_writes_never() {
        let dir = std::env::temp_dir().join(format!("widgets-todos-edits-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.json");
        fs::write(&path, "{}").unwrap();
        let edits = Edits::new(&path);
        assert_eq!(edits.look(), None, "nothing changed");

        // The server's own replacement, as a compaction makes it.
        assert!(!edits.before_replacing());
        super::super::files::write_atomically(&path, |out| {
            std::io::Write::write_all(out, b"{\"todos\": []}")
        })
        .unwrap();
        edits.replaced();
        assert_eq!(edits.look(), None, "the server's own write is no edit");

        // Another program's edit: told once.
        fs::write(&path, "{\"todos\": [], \"widgets\": []}").unwrap();
        assert!(matches!(edits.look(), Some(Edit::Changed(_))));
        assert_eq!(edits.look(), None, "the same edit is told once");
        assert!(!edits.before_replacing(), "an edit seen is no surprise");

        // A change after the look is told when the file is replaced.
        fs::write(&path, "{\"todos\": []}").unwrap();
        assert!(edits.before_replacing());
        edits.replaced();

        // A deletion is a change too (no file then, and none before, is none).
        fs::remove_file(&path).unwrap();
        assert_eq!(edits.look(), Some(Edit::Deleted));
        assert_eq!(edits.look(), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
