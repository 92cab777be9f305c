//! Compaction, with `--data`: the snapshot that replaces the journal's
//! records (see `journal.rs`), written by a thread of its own whenever the
//! journal has grown enough, and once more when the store closes.
//!
//! The same thread looks at the data files about once a second for a
//! change by another program (`edits.rs`, [`Storage::journal_changed`]).
//! Any such change may leave the files at their names without writes the
//! server acknowledged: a journal replaced or deleted (the server's handle
//! then writes to a file no name leads to), cut, or a snapshot deleted or
//! edited. So each is answered the same way: a compaction, which writes
//! both files again from memory, and memory holds every acknowledged
//! write, those made between the change and the look included. Then a
//! warning says what was found and done. With `--watch`, an edit of the
//! snapshot that loads is taken instead as the new state (as json-server
//! does), and then written the same way, so that a crash keeps both the
//! edit and the writes after it; and the snapshot is kept up to date
//! within about a second of each write, so that an editor opens what the
//! server holds.

use std::path::Path;
use std::sync::Arc;

use super::edits::{Edit, LOOK_EVERY};
use super::feed::{Change, Ticket};
use super::files::Snapshot;
use super::journal::{COMPACT_AFTER, Cut, Storage};
use super::load::{State, parse_snapshot};
use super::{Collection, Shared, Store, lock};
use crate::model::{Resource, Todo, Widget};

/// How a store kept in data files behaves ([`Store::open_with`]).
#[derive(Debug, Clone, Copy)]
pub struct Durability {
    /// Compact once the journal holds this many records, or as many as
    /// there are items if that is more.
    pub compact_after: u64,
    /// `--watch`: load an edit of the snapshot by another program, and
    /// keep the snapshot up to date within about a second of each write.
    pub watch: bool,
}

impl Default for Durability {
    fn default() -> Durability {
        Durability {
            compact_after: COMPACT_AFTER,
            watch: false,
        }
    }
}

impl Store {
    /// A store kept in the data files at `path` (see `journal.rs`), loaded
    /// from them. The error names the file and what is wrong with it.
    pub fn open(max_items: usize, path: &Path) -> Result<Store, String> {
        Store::open_with(max_items, path, Durability::default())
    }

    /// [`Store::open`], compacting after `records` journal records rather
    /// than the default (tests use a small number).
    pub fn open_compacting_after(
        max_items: usize,
        path: &Path,
        records: u64,
    ) -> Result<Store, String> {
        let options = Durability {
            compact_after: records,
            watch: false,
        };
        Store::open_with(max_items, path, options)
    }

    /// [`Store::open`], with the given [`Durability`].
    pub fn open_with(max_items: usize, path: &Path, options: Durability) -> Result<Store, String> {
        let paths = Storage::paths(path)?;
        let (state, journal) = super::load::load(&paths.0, &paths.1, max_items)?;
        let items = (state.widgets.items.len() + state.todos.items.len()) as u64;
        let storage = Storage::open(paths, state.seq, journal, items, options)?;
        let store = Store::with(max_items, state, Some(storage));
        let shared = Arc::clone(&store.shared);
        let compactor = std::thread::Builder::new()
            .name("compactor".into())
            .spawn(move || shared.compact_when_due())
            .map_err(|err| format!("cannot start the compaction thread: {err}"))?;
        *lock(&store.compactor) = Some(compactor);
        Ok(store)
    }

    /// With `--data`: writes a final snapshot and empties the journal. Call
    /// it once the server has stopped; later writes are still journaled.
    pub fn close(&self) {
        let Some(storage) = &self.shared.storage else {
            return;
        };
        self.stop_compacting(storage);
        if let Err(err) = self.shared.compact(false) {
            log::error!(target: crate::logging::LOG, "cannot write the final snapshot: {err}; the journal keeps every change");
        }
    }

    fn stop_compacting(&self, storage: &Storage) {
        storage.close();
        if let Some(compactor) = lock(&self.compactor).take()
            && compactor.join().is_err()
        {
            log::error!(target: crate::logging::LOG, "the compaction thread panicked");
        }
    }
}

impl Drop for Store {
    /// A store dropped without [`Store::close`] leaves its files as they
    /// are, as a crash would, and its compaction thread ends: it must not
    /// go on looking after files that another store may open next.
    fn drop(&mut self) {
        if let Some(storage) = &self.shared.storage {
            self.stop_compacting(storage);
        }
    }
}

impl Shared {
    /// The compaction thread: compacts whenever the journal has grown enough,
    /// until the store is closed; meanwhile, about once a second, looks at
    /// the data files for a change by another program.
    pub(super) fn compact_when_due(&self) {
        let Some(storage) = &self.storage else {
            return;
        };
        // A change found but not yet answered (its compaction failed).
        let mut unanswered: Option<String> = None;
        while let Some(due) = storage.wait_for_compaction(LOOK_EVERY) {
            if let Some(found) = unanswered.take() {
                unanswered = self.write_files_again(storage, found, true);
                continue;
            }
            if let Some(found) = self.look(storage) {
                unanswered = self.write_files_again(storage, found, false);
                continue;
            }
            // With --watch, the snapshot shows every write within a second.
            let due = due || (storage.watching() && storage.since_cut() > 0);
            let result = if due {
                self.compact(storage.watching())
            } else {
                Ok(())
            };
            if let Err(err) = result
                && err.kind() != std::io::ErrorKind::Interrupted
            {
                log::warn!(target: crate::logging::LOG, "cannot compact the journal: {err}; it keeps growing until a retry");
            }
        }
    }

    /// What another program did to the data files, as the start of a
    /// warning; `None` when nothing (or an edit `--watch` loaded).
    fn look(&self, storage: &Storage) -> Option<String> {
        if let Some(what) = storage.journal_changed() {
            let journal = storage.journal_path().display();
            return Some(format!(
                "{journal} {what} by another program while the server ran"
            ));
        }
        let path = storage.edits().path();
        let shown = path.display();
        match storage.edits().look()? {
            Edit::Deleted => Some(format!(
                "{shown} was deleted by another program while the server ran"
            )),
            Edit::Changed(text) if storage.watching() => self.reload(storage, path, text),
            Edit::Changed(_) => Some(format!(
                "{shown} was changed by another program while the server ran: the server does \
                 not read it again (start it with --watch for that), so that change is lost. To \
                 change the data, use the API; or stop the server, edit the file, and start it \
                 again"
            )),
        }
    }

    /// Answers a change another program made: a compaction, which writes
    /// both files from memory; then the warning. Returns the change when
    /// the compaction failed, to try again at the next look (a `retry`,
    /// whose failure was said already).
    fn write_files_again(&self, storage: &Storage, found: String, retry: bool) -> Option<String> {
        match self.compact(false) {
            Ok(()) => {
                log::warn!(target: crate::logging::LOG, "{found}. The server wrote a fresh snapshot of what it holds to {} and a new journal, \
                     so every acknowledged write is in the data files again",
                    storage.edits().path().display()
                );
                None
            }
            Err(err) => {
                if !retry {
                    log::error!(target: crate::logging::LOG, "{found}, and the server cannot write its data files again: {err}; acknowledged \
                         writes may be lost at a crash until it can (it tries again every second)"
                    );
                }
                Some(found)
            }
        }
    }

    /// Writes a snapshot of both collections and drops the journal records
    /// it covers. The copy and the cut are taken under both collections'
    /// locks (widgets first, as everywhere), so they match exactly; the
    /// writing happens after, with no lock held. With `keep_edits`, an
    /// edit of the snapshot is not written over (see [`Storage::compact`]).
    pub(super) fn compact(&self, keep_edits: bool) -> std::io::Result<()> {
        let Some(storage) = &self.storage else {
            return Ok(());
        };
        let (snapshot, cut, items) = {
            let widgets = lock(&self.widgets);
            let todos = lock(&self.todos);
            copy(storage, &widgets, &todos)
        };
        storage.compact(&snapshot, cut, items, keep_edits)
    }

    /// With `--watch`: the edited snapshot at `path`, whose text is `text`,
    /// loaded as at start-up, becomes the state, and both files are written
    /// from it; the journal's records before it are the past it replaces,
    /// and the writes after it are journaled as ever. An edit that does not
    /// load is kept in `PATH.rejected`, and the change to answer is
    /// returned: the server writes its own data back, so that a restart
    /// loads.
    fn reload(&self, storage: &Storage, path: &Path, text: Vec<u8>) -> Option<String> {
        let shown = path.display();
        let loaded = parse_snapshot(&text, self.max_items).map_err(|why| {
            let rejected = super::files::rejected_path(path);
            match std::fs::write(&rejected, &text) {
                Ok(()) => format!("{why}; the edit is kept in {}", rejected.display()),
                Err(err) => format!("{why}; cannot keep it aside: {err}"),
            }
        });
        let state = match loaded {
            Ok(state) => state,
            Err(why) => {
                return Some(format!(
                    "{shown} was changed by another program while the server ran, and the edit \
                     does not load: {why}; the data served stays as it was"
                ));
            }
        };
        let counts = (state.todos.items.len(), state.widgets.items.len());
        match self.take(storage, state) {
            Ok(written) => {
                log::info!(target: crate::logging::LOG, "loaded {shown}, edited by another program: {} todos, {} widgets; what the \
                     server held before is replaced by the edit",
                    counts.0, counts.1
                );
                // Served, but not yet in files of the server's own: again.
                written
                    .err()
                    .map(|_| format!("{shown} was edited and loaded"))
            }
            Err(err) => {
                log::error!(target: crate::logging::LOG, "cannot load the edit of {shown}: {err}; the data served stays as it was");
                None
            }
        }
    }

    /// Makes `state` the store's, under both locks, once every change
    /// made so far is durable (then there is nothing to take back), or the
    /// error; writes both files from it, with the result; and tells
    /// subscribers of `/api/events` that both collections were replaced
    /// (a `reset`: read them again).
    fn take(&self, storage: &Storage, state: State) -> std::io::Result<std::io::Result<()>> {
        let (snapshot, cut, items, tickets) = {
            let mut widgets = lock(&self.widgets);
            let mut todos = lock(&self.todos);
            storage.sync_appended()?;
            widgets.replace(state.widgets);
            todos.replace(state.todos);
            let (snapshot, cut, items) = copy(storage, &widgets, &todos);
            (snapshot, cut, items, [self.ticket(), self.ticket()])
        };
        let written = storage.compact(&snapshot, cut, items, false);
        let [widgets, todos] = tickets;
        for (ticket, collection) in [(widgets, Widget::COLLECTION), (todos, Todo::COLLECTION)] {
            if let Some(ticket) = ticket {
                ticket.publish(Change::Reset, collection, None, None);
            }
        }
        Ok(written)
    }

    /// An event's ticket when the feed records (`feed.rs`).
    fn ticket(&self) -> Option<Ticket<'_>> {
        let recording = self
            .feed
            .recording
            .load(std::sync::atomic::Ordering::Acquire);
        recording.then(|| self.feed.reserve())
    }
}

/// The snapshot of both collections, its cut, and how many items: call it
/// under both locks.
fn copy(
    storage: &Storage,
    widgets: &Collection<Widget>,
    todos: &Collection<Todo>,
) -> (Snapshot<Widget, Todo>, Cut, u64) {
    let cut = storage.cut();
    let snapshot = Snapshot {
        seq: cut.seq,
        widgets: (widgets.last_id, widgets.items.values().cloned().collect()),
        todos: (todos.last_id, todos.items.values().cloned().collect()),
    };
    let items = (widgets.items.len() + todos.items.len()) as u64;
    (snapshot, cut, items)
}
