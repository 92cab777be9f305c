//! Durable storage for `--data PATH`: a snapshot, a journal beside it, and
//! the group commit that makes a write durable before it is acknowledged.
//!
//! The two files, their names and their format: `files.rs`.
//!
//! # Writing
//!
//! A change's record is appended to a buffer and the change made in
//! memory, both under the collection's lock, so the journal's order is the
//! order of the changes; the record first, so that a record refused (once
//! writing has failed, or with no record number left) leaves nothing to
//! undo. Then, outside that lock, the request waits in [`Storage::commit`]
//! until its record is on disk. The first waiter to find no write in
//! progress writes the whole buffer, everyone's records, calls `fdatasync`,
//! and wakes the others: concurrent writers share one flush (group commit).
//! Reads never touch any of this.
//!
//! If a flush fails, every later write is refused (503), the file is cut
//! back to its last durable record, and each waiting writer gets the error;
//! the store then takes back in memory every change not on disk (see
//! `store.rs`).
//!
//! # Compaction
//!
//! Once the journal holds more records than `max(10,000, items stored)`, a
//! background thread writes a new snapshot and drops the records it covers
//! from the journal; also at a clean shutdown. The count starts from the
//! records the journal holds at start-up, so that a server that crashes
//! every few thousand writes still compacts. A record's cost is therefore
//! constant: one append, a share of an `fdatasync`, and a bounded share of
//! the next snapshot. See [`Storage::compact`] for the order of the steps,
//! and why a crash between any two of them loses nothing.
//!
//! # Another program's change
//!
//! A journal replaced, deleted or cut by another program leaves the
//! server's handle writing to a file no name leads to, or after a gap:
//! [`Storage::journal_changed`] notices it, and a compaction writes both
//! files again from memory (`compaction.rs`).
//!
//! # Loading
//!
//! `load.rs` reads the files at start-up, before they are opened here: the
//! snapshot, then every journal record with a higher `seq`, each item
//! checked by the same rules as the API.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Durability;
use super::edits::{Edits, journal_change};
use super::files::{
    Snapshot, journal_path, open_files, replace_journal, resolve, write_atomically, write_snapshot,
};
use super::load::Replayed;
use crate::error::{ApiError, lock};
use crate::model::{MAX_SAFE_INTEGER, Resource};

/// By default, the journal may hold this many records, or as many as there
/// are items stored if that is more, before it is compacted into a new
/// snapshot.
pub const COMPACT_AFTER: u64 = 10_000;

/// The last journal record number. Record numbers (`seq`) run from 1, and
/// 0 means "no record yet"; like ids, they stay within the integers every
/// JSON reader holds exactly (jq, JavaScript), so that a snapshot or a
/// journal can be read and checked with any tool. At 100,000 writes a
/// second they would last 2,800 years; only a hand-edited `seq` reaches
/// the end, and then writes are refused rather than numbered past it.
pub const MAX_SEQ: u64 = MAX_SAFE_INTEGER;

/// The open data files and the group commit.
pub struct Storage {
    snapshot_path: PathBuf,
    journal_path: PathBuf,
    log: Mutex<Log>,
    /// Signalled when `durable` advances, `flushing` ends, the storage
    /// fails, or a compaction is due.
    changed: Condvar,
    /// The snapshot as the server last read or wrote it (`edits.rs`).
    edits: Edits,
    /// `--watch`: an edit of the snapshot is loaded (`compaction.rs`).
    watch: bool,
}

/// The journal's state, under `Storage::log`.
struct Log {
    file: Arc<File>,
    /// Records appended but not yet handed to a flush.
    pending: Vec<u8>,
    /// The `seq` the next record gets.
    next_seq: u64,
    /// Every record up to this `seq` is on disk.
    durable: u64,
    /// Bytes in the journal file once everything appended is written.
    appended_bytes: u64,
    /// Bytes actually written to the journal file.
    written_bytes: u64,
    /// A flush (or the journal's replacement) is in progress; one at a time.
    flushing: bool,
    /// Why writing failed; from then on every write is refused.
    failed: Option<String>,
    /// Records appended since the last snapshot's cut (at start-up, the
    /// records the journal holds).
    since_cut: u64,
    /// While a compaction runs: the records written since its cut, which
    /// become the new journal (read back from the file, they could be
    /// gone if another program cut it meanwhile).
    tail: Option<Tail>,
    /// Compact once `since_cut` reaches this: `compact_after`, or the number
    /// of items stored at the last compaction if that is more.
    compact_at: u64,
    compact_after: u64,
    /// Set by `close`: the compaction thread ends.
    closing: bool,
}

/// The records a compaction carries over into the new journal.
struct Tail {
    /// Where its cut is, in the journal's bytes.
    from: u64,
    bytes: Vec<u8>,
}

/// A record just appended: its number, and the last record on disk then.
#[derive(Debug, Clone, Copy)]
pub struct Appended {
    pub seq: u64,
    pub durable: u64,
}

/// Where a snapshot cuts the journal: the records up to `seq` are in the
/// snapshot, and they are the journal's first `bytes` bytes.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub seq: u64,
    bytes: u64,
    /// The records it covers since the last cut, counted again toward the
    /// next compaction should this one fail.
    records: u64,
}

impl Storage {
    /// The data files of `--data PATH`, through any symbolic links: the
    /// snapshot's and the journal's. New files are made and renamed beside
    /// them. The error names the file.
    pub fn paths(path: &Path) -> Result<(PathBuf, PathBuf), String> {
        let resolved = |path: &Path| {
            resolve(path).map_err(|err| format!("cannot follow {}: {err}", path.display()))
        };
        Ok((resolved(path)?, resolved(&journal_path(path))?))
    }

    /// Opens (creating if absent) the data files at `paths`, once `load.rs`
    /// has loaded them: `seq` is the last record loaded, `journal` the
    /// journal's length without a torn last line and its records, `items`
    /// how many items were loaded. The error is a message naming the file.
    pub fn open(
        (snapshot_path, journal_path): (PathBuf, PathBuf),
        seq: u64,
        journal: Replayed,
        items: u64,
        options: Durability,
    ) -> Result<Storage, String> {
        let compact_after = options.compact_after;
        let file = open_files(&snapshot_path, &journal_path)?;
        let edits = Edits::new(&snapshot_path);
        Ok(Storage {
            edits,
            watch: options.watch,
            snapshot_path,
            journal_path,
            log: Mutex::new(Log {
                file: Arc::new(file),
                pending: Vec::new(),
                next_seq: seq + 1,
                durable: seq,
                appended_bytes: journal.bytes,
                written_bytes: journal.bytes,
                flushing: false,
                failed: None,
                since_cut: journal.records,
                tail: None,
                compact_after,
                compact_at: compact_after.max(items),
                closing: false,
            }),
            changed: Condvar::new(),
        })
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        lock(&self.log)
    }

    fn wait<'a>(&self, log: MutexGuard<'a, Log>) -> MutexGuard<'a, Log> {
        self.changed
            .wait(log)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// 503 once writing has failed: nothing more may change.
    pub fn check_writable(&self) -> Result<(), ApiError> {
        match &self.log().failed {
            Some(why) => Err(unavailable(why)),
            None => Ok(()),
        }
    }

    /// Appends the record of a `put` (create or update) of `item`. Call it
    /// under the collection's lock, right before making the change, which
    /// must not be made if this fails (503 once writing has failed, 507 when
    /// no record number is left); the record's `seq` is for
    /// [`Storage::commit`].
    pub fn put<T: Resource>(&self, item: &T) -> Result<Appended, ApiError> {
        self.append::<T>("put", Some(item), None)
    }

    /// Appends the record of deleting item `id`; see [`Storage::put`].
    pub fn delete<T: Resource>(&self, id: u64) -> Result<Appended, ApiError> {
        self.append::<T>("delete", None, Some(id))
    }

    /// Appends the record of emptying a collection; see [`Storage::put`].
    pub fn clear<T: Resource>(&self) -> Result<Appended, ApiError> {
        self.append::<T>("clear", None, None)
    }

    /// Appends one journal record (see the module comment for the format).
    fn append<T: Resource>(
        &self,
        op: &'static str,
        item: Option<&T>,
        id: Option<u64>,
    ) -> Result<Appended, ApiError> {
        #[derive(Serialize)]
        struct Record<'a, T> {
            seq: u64,
            op: &'static str,
            collection: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            item: Option<&'a T>,
            #[serde(skip_serializing_if = "Option::is_none")]
            id: Option<u64>,
        }
        let mut log = self.log();
        if let Some(why) = &log.failed {
            return Err(unavailable(why));
        }
        let seq = log.next_seq;
        if seq > MAX_SEQ {
            return Err(ApiError::Exhausted {
                detail: format!(
                    "no journal record numbers left: the data file has used every one \
                     up to {MAX_SEQ}; nothing was changed"
                ),
                hint: "stop the server (a clean stop empties the journal), set \"seq\" to 0 \
                       in the data file, and start it again",
            });
        }
        let record = Record {
            seq,
            op,
            collection: T::COLLECTION,
            item,
            id,
        };
        let before = log.pending.len();
        // Serializing our own records into a Vec cannot fail; if it ever
        // did, the half-written record is taken back out and the change is
        // not made.
        if let Err(err) = serde_json::to_writer(&mut log.pending, &record) {
            log.pending.truncate(before);
            log::error!(target: crate::logging::LOG, "cannot encode a journal record: {err}");
            return Err(ApiError::Internal);
        }
        log.next_seq += 1;
        log.pending.push(b'\n');
        log.appended_bytes += (log.pending.len() - before) as u64;
        log.since_cut += 1;
        if log.since_cut == log.compact_at {
            self.changed.notify_all();
        }
        Ok(Appended {
            seq,
            durable: log.durable,
        })
    }

    /// Returns once record `seq` is on disk: see the module comment. 503 if
    /// the journal cannot be written.
    pub fn commit(&self, seq: u64) -> Result<(), ApiError> {
        let mut log = self.log();
        loop {
            if log.durable >= seq {
                return Ok(());
            }
            if let Some(why) = &log.failed {
                return Err(unavailable(why));
            }
            if log.flushing {
                log = self.wait(log);
                continue;
            }
            log = self.flush(log);
        }
    }

    /// Writes and syncs everything pending, as the leader of a group commit.
    fn flush<'a>(&'a self, mut log: MutexGuard<'a, Log>) -> MutexGuard<'a, Log> {
        log.flushing = true;
        let batch = std::mem::take(&mut log.pending);
        let upto = log.next_seq - 1;
        let file = Arc::clone(&log.file);
        drop(log);
        let result = (&*file).write_all(&batch).and_then(|()| file.sync_data());
        let mut log = self.log();
        log.flushing = false;
        match result {
            Ok(()) => {
                log.durable = upto;
                let at = log.written_bytes;
                if let Some(tail) = &mut log.tail {
                    // The part of the batch after the compaction's cut.
                    let skip = tail.from.saturating_sub(at).min(batch.len() as u64);
                    tail.bytes.extend_from_slice(&batch[skip as usize..]);
                }
                log.written_bytes += batch.len() as u64;
                if log.pending.is_empty() {
                    // Keep the allocation for the next batch.
                    let mut batch = batch;
                    batch.clear();
                    log.pending = batch;
                }
            }
            Err(err) => {
                let shown = self.journal_path.display();
                log::error!(target: crate::logging::LOG, "cannot write {shown}: {err}; refusing every write from now on");
                // Part of the batch may be in the file: whole records never
                // acknowledged, which the next start would load. Cut the
                // file back to its last durable record.
                let durable_end = log.written_bytes;
                if let Err(err) = file.set_len(durable_end).and_then(|()| file.sync_data()) {
                    log::error!(target: crate::logging::LOG, "cannot cut {shown} back to its last durable record: {err}; \
                         records of the failed writes may load at the next start"
                    );
                }
                log.failed = Some(err.to_string());
                log.pending = Vec::new();
            }
        }
        self.changed.notify_all();
        log
    }

    /// For tests: while `hold` is set, every writer waits as if a flush
    /// were in progress, so that the next flush carries all their records.
    #[cfg(test)]
    pub(crate) fn hold_flushes(&self, hold: bool) {
        self.log().flushing = hold;
        self.changed.notify_all();
    }

    /// Every record up to this `seq` is on disk. Once writing has failed,
    /// the store takes back every change after it.
    pub fn durable(&self) -> u64 {
        self.log().durable
    }

    /// Marks where a snapshot of the state as it is now cuts the journal.
    /// Call it while holding every collection's lock, so that no change
    /// falls between the state copied and the cut.
    pub fn cut(&self) -> Cut {
        let mut log = self.log();
        let records = std::mem::take(&mut log.since_cut);
        log.tail = Some(Tail {
            from: log.appended_bytes,
            bytes: Vec::new(),
        });
        Cut {
            seq: log.next_seq - 1,
            bytes: log.appended_bytes,
            records,
        }
    }

    /// Makes every record up to `cut` durable, replaces the snapshot with
    /// `snapshot` (which must match `cut`), then drops the records it
    /// covers from the journal. A crash at any point
    /// leaves files that load to the same state: the old snapshot with the
    /// whole journal, the new snapshot with the whole journal (records up
    /// to `cut.seq` are skipped), or the new snapshot with the new journal.
    /// Neither file is read: the new journal's records are those written
    /// since the cut, kept in memory meanwhile, so a journal that another
    /// program replaced, deleted or cut is made whole again too. With
    /// `keep_edits` (`--watch`), a snapshot edited since the last look is
    /// not replaced: the error is `Interrupted`, and the next look loads it.
    pub fn compact<W: Serialize, T: Serialize>(
        &self,
        snapshot: &Snapshot<W, T>,
        cut: Cut,
        items: u64,
        keep_edits: bool,
    ) -> io::Result<()> {
        let result = self
            .write_snapshot_to(cut, snapshot, keep_edits)
            .and_then(|()| self.replace_journal_from(cut, items));
        if result.is_err() {
            let mut log = self.log();
            log.tail = None;
            log.since_cut += cut.records;
        }
        result
    }

    /// [`Storage::compact`]'s first steps: the snapshot written, once the
    /// journal is written up to the cut.
    fn write_snapshot_to<W: Serialize, T: Serialize>(
        &self,
        cut: Cut,
        snapshot: &Snapshot<W, T>,
        keep_edits: bool,
    ) -> io::Result<()> {
        // Everything up to the cut must be durable before the snapshot that
        // holds it is written: should a journal write fail meanwhile, the
        // store takes those changes back, and a snapshot holding them would
        // bring them back at the next start.
        drop(self.written_up_to(cut.bytes)?);

        let Ok(replacing) = self.edits.before_replacing(keep_edits) else {
            let edited = "the snapshot was edited meanwhile: the edit is loaded first";
            return Err(io::Error::new(io::ErrorKind::Interrupted, edited));
        };
        let written = write_atomically(&self.snapshot_path, |out| write_snapshot(out, snapshot))?;
        self.edits.replaced(replacing, &written);
        Ok(())
    }

    /// [`Storage::compact`]'s last step: the journal replaced by the
    /// records written since the cut.
    fn replace_journal_from(&self, cut: Cut, items: u64) -> io::Result<()> {
        // Nothing may be written while the journal is replaced.
        let mut log = self.log();
        loop {
            if let Some(why) = &log.failed {
                return Err(io::Error::other(why.clone()));
            }
            if !log.flushing {
                break;
            }
            log = self.wait(log);
        }
        log.flushing = true;
        let tail = log.tail.take().map(|tail| tail.bytes).unwrap_or_default();
        debug_assert_eq!(tail.len() as u64, log.written_bytes - cut.bytes);
        drop(log);

        let mut renamed = false;
        let replaced = replace_journal(&self.journal_path, &tail, &mut renamed);

        let mut log = self.log();
        log.flushing = false;
        let result = match replaced {
            Ok(fresh) => {
                log.file = Arc::new(fresh);
                log.written_bytes = tail.len() as u64;
                log.appended_bytes -= cut.bytes;
                log.compact_at = log.compact_after.max(items);
                Ok(())
            }
            // The old journal is still in use: the next compaction tries
            // again (the records of the tail are in the old file, unless
            // another program cut it, which the next look sees again).
            Err(err) if !renamed => Err(err),
            // The name is the new file's, but perhaps not durably so: a
            // crash could bring the old journal back, without whatever we
            // write now. Refuse every write rather than risk it.
            Err(err) => {
                log::error!(target: crate::logging::LOG, "cannot sync the directory of {}: {err}; refusing every write from now on",
                    self.journal_path.display()
                );
                log.failed = Some(err.to_string());
                Err(err)
            }
        };
        self.changed.notify_all();
        result
    }

    /// Flushes until the journal's first `bytes` are written (group
    /// commit's leader or follower), and returns with its lock; the error
    /// once writing has failed.
    fn written_up_to(&self, bytes: u64) -> io::Result<MutexGuard<'_, Log>> {
        let mut log = self.log();
        loop {
            if let Some(why) = &log.failed {
                return Err(io::Error::other(why.clone()));
            }
            if log.written_bytes >= bytes {
                return Ok(log);
            }
            log = if log.flushing {
                self.wait(log)
            } else {
                self.flush(log)
            };
        }
    }

    /// Makes every record appended so far durable. Called with every
    /// collection's lock held, nothing is appended meanwhile, so every
    /// change made in memory is then on disk, with nothing to take back.
    pub fn sync_appended(&self) -> io::Result<()> {
        let appended = self.log().appended_bytes;
        self.written_up_to(appended).map(drop)
    }

    /// Records appended since the last snapshot's cut.
    pub fn since_cut(&self) -> u64 {
        self.log().since_cut
    }

    /// What another program did to the journal, if anything (see
    /// [`journal_change`]). The compaction thread calls it about once a
    /// second, and nothing is looked at on a write.
    pub fn journal_changed(&self) -> Option<String> {
        let (ours, written, flushing) = {
            let log = self.log();
            // After a failure nothing more is written anyway.
            if log.failed.is_some() {
                return None;
            }
            // Under the lock, `written_bytes` cannot grow: the file holds
            // at least that many bytes, and, unless a flush is writing,
            // exactly that many.
            (log.file.metadata().ok()?, log.written_bytes, log.flushing)
        };
        journal_change(&self.journal_path, &ours, written, flushing)
    }

    /// The snapshot, as the server last read or wrote it.
    pub(super) fn edits(&self) -> &Edits {
        &self.edits
    }

    /// `--watch`: load edits of the snapshot.
    pub(super) fn watching(&self) -> bool {
        self.watch
    }

    pub(super) fn journal_path(&self) -> &Path {
        &self.journal_path
    }

    /// Blocks until a compaction is due (`Some(true)`) or `timeout` has
    /// passed (`Some(false)`); `None` once `close` was called.
    pub fn wait_for_compaction(&self, timeout: Duration) -> Option<bool> {
        let deadline = Instant::now() + timeout;
        let mut log = self.log();
        loop {
            if log.closing {
                return None;
            }
            if log.since_cut >= log.compact_at {
                return Some(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Some(false);
            }
            log = match self.changed.wait_timeout(log, left) {
                Ok((log, _)) => log,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Ends the compaction thread's wait.
    pub fn close(&self) {
        self.log().closing = true;
        self.changed.notify_all();
    }
}

fn unavailable(why: &str) -> ApiError {
    ApiError::StorageUnavailable {
        detail: format!("the data file cannot be written ({why}); no change is accepted"),
    }
}
