//! Compaction, with `--data`: the snapshot that replaces the journal's
//! records (see `journal.rs`), written by a thread of its own whenever the
//! journal has grown enough, and once more when the store closes.

use super::journal::Snapshot;
use super::{Shared, Store, edits, lock};

impl Store {
    /// With `--data`: writes a final snapshot and empties the journal. Call
    /// it once the server has stopped; later writes are still journaled.
    pub fn close(&self) {
        let Some(storage) = &self.shared.storage else {
            return;
        };
        storage.close();
        if let Some(compactor) = lock(&self.compactor).take()
            && compactor.join().is_err()
        {
            log::error!(target: crate::logging::LOG, "the compaction thread panicked");
        }
        if let Err(err) = self.shared.compact() {
            log::error!(target: crate::logging::LOG, "cannot write the final snapshot: {err}; the journal keeps every change");
        }
    }
}

impl Shared {
    /// The compaction thread: compacts whenever the journal has grown enough,
    /// until the store is closed; meanwhile, looks for edits of the data
    /// file by another program.
    pub(super) fn compact_when_due(&self) {
        let Some(storage) = &self.storage else {
            return;
        };
        while let Some(due) = storage.wait_for_compaction(edits::LOOK_EVERY) {
            storage.look_for_edits();
            if !due {
                continue;
            }
            if let Err(err) = self.compact() {
                log::warn!(target: crate::logging::LOG, "cannot compact the journal: {err}; it keeps growing until a retry");
            }
        }
    }

    /// Writes a snapshot of both collections and drops the journal records
    /// it covers. The copy and the cut are taken under both collections'
    /// locks (widgets first, as everywhere), so they match exactly; the
    /// writing happens after, with no lock held.
    pub(super) fn compact(&self) -> std::io::Result<()> {
        let Some(storage) = &self.storage else {
            return Ok(());
        };
        let (snapshot, cut, items) = {
            let widgets = lock(&self.widgets);
            let todos = lock(&self.todos);
            let cut = storage.cut();
            let snapshot = Snapshot {
                seq: cut.seq,
                widgets: (widgets.last_id, widgets.items.values().cloned().collect()),
                todos: (todos.last_id, todos.items.values().cloned().collect()),
            };
            (
                snapshot,
                cut,
                (widgets.items.len() + todos.items.len()) as u64,
            )
        };
        storage.compact(&snapshot, cut, items)
    }
}
