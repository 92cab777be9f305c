//! The data files changed by another program while the server runs.
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
//! silently: each is logged. The journal is looked at likewise
//! ([`journal_change`]), by `journal.rs`, which holds the file it appends
//! to.
//!
//! A change is any change of the file's identity (device and inode: a
//! rename over it), size or modification time, or its deletion, since the
//! server last read or wrote it.

use std::fs::{self, File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::error::lock;

/// How often the compaction thread looks at the data files.
pub(super) const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long a changed file must stay unchanged before it is read or
/// written over: an editor that writes in place may be halfway through.
const SETTLE: Duration = Duration::from_millis(200);

/// What tells one version of a file from another, short of reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl From<&Metadata> for Stamp {
    fn from(meta: &Metadata) -> Stamp {
        Stamp {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// The file at `path` now, `None` when there is none.
fn stamp(path: &Path) -> Option<Stamp> {
    fs::metadata(path).ok().map(|meta| Stamp::from(&meta))
}

/// How the snapshot was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Edit {
    Deleted,
    /// Replaced, written or cut: its text now.
    Changed(Vec<u8>),
}

/// The snapshot as the server last read or wrote it.
pub(super) struct Edits {
    path: PathBuf,
    ours: Mutex<Option<Stamp>>,
    /// An edit written to the file while the server replaced it, read
    /// from the replaced file: the next [`Edits::look`] gives it.
    late: Mutex<Option<Vec<u8>>>,
}

/// The file the server is about to replace, held open: an edit written to
/// it meanwhile would otherwise go unseen, to a file no name leads to.
pub(super) struct Replacing(Option<(File, Stamp)>);

impl Edits {
    /// Call once the server has read (or written) the file at `path`.
    pub(super) fn new(path: &Path) -> Edits {
        Edits {
            path: path.to_path_buf(),
            ours: Mutex::new(stamp(path)),
            late: Mutex::new(None),
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// A change since the server last read or wrote the file, once it has
    /// settled; `None` when there is none (yet). The change counts as
    /// known from then on: the caller loads it or writes over it.
    pub(super) fn look(&self) -> Option<Edit> {
        if let Some(text) = lock(&self.late).take() {
            return Some(Edit::Changed(text));
        }
        let now = stamp(&self.path);
        if now == *lock(&self.ours) {
            return None;
        }
        std::thread::sleep(SETTLE);
        if stamp(&self.path) != now {
            return None;
        }
        *lock(&self.ours) = now;
        match fs::read(&self.path) {
            Ok(text) => Some(Edit::Changed(text)),
            Err(_) => Some(Edit::Deleted),
        }
    }

    /// Call just before the server replaces the file. `Err` when it
    /// changed since [`Edits::look`] last saw it and the change is to be
    /// `kept` (`--watch` loads it first); otherwise such a change is said
    /// to be lost.
    pub(super) fn before_replacing(&self, kept: bool) -> Result<Replacing, ()> {
        let old = File::open(&self.path).ok().and_then(|file| {
            let stamp = Stamp::from(&file.metadata().ok()?);
            Some((file, stamp))
        });
        if old.as_ref().map(|(_, stamp)| *stamp) != *lock(&self.ours) {
            if kept {
                return Err(());
            }
            self.lost();
        }
        Ok(Replacing(old))
    }

    /// Call once the server has replaced the file with the one `written`
    /// describes. An edit written to the old file meanwhile is kept for
    /// the next look.
    pub(super) fn replaced(&self, replacing: Replacing, written: &Metadata) {
        *lock(&self.ours) = Some(Stamp::from(written));
        let Replacing(Some((mut old, before))) = replacing else {
            return;
        };
        let after = old.metadata().map(|meta| Stamp::from(&meta)).ok();
        if after != Some(before) {
            let mut text = Vec::new();
            match std::io::Read::read_to_end(&mut old, &mut text) {
                Ok(_) => *lock(&self.late) = Some(text),
                Err(_) => self.lost(),
            }
        }
    }

    fn lost(&self) {
        log::warn!(target: crate::logging::LOG, "{}: the change another program made to it while the server ran is lost: \
             replaced with the server's data",
            self.path.display()
        );
    }
}

/// What another program did to the journal at `path`, if anything, given
/// `ours`, the metadata of the file the server appends to, the bytes it
/// wrote there, and whether a flush is writing more: the file at the name
/// is not the one written (replaced, or deleted), or the one written is
/// not as long as the server wrote it (cut, or written to).
pub(super) fn journal_change(
    path: &Path,
    ours: &Metadata,
    written: u64,
    flushing: bool,
) -> Option<String> {
    let len = ours.len();
    match fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Some("was deleted".into()),
        Err(_) => None,
        Ok(now) if (now.dev(), now.ino()) != (ours.dev(), ours.ino()) => {
            Some("was replaced".into())
        }
        Ok(_) if len < written => Some(format!(
            "was cut from {written} to {len} bytes (the records cut off were \
             acknowledged writes, which a restart would have refused as missing)"
        )),
        Ok(_) if len > written && !flushing => Some(format!(
            "was written to ({len} bytes where the server wrote {written})"
        )),
        Ok(_) => None,
    }
}

#[cfg(test)]
#[path = "edits_tests.rs"]
mod tests;
