//! The data: one `Mutex`-guarded collection per resource, and id allocation.
//!
//! Invariants, stated as absences:
//! - No module but this one locks the data. Handlers call a `Store`
//!   method, which locks once, does the whole read-modify-write, and
//!   returns owned data; serializing and writing to the socket happen after
//!   the lock is gone. Two exceptions: the first read of the list, or of an
//!   item, after a change serializes it once under the lock and keeps it,
//!   with its entity tag, for the reads that follow until the next change
//!   (that doubles the throughput of list reads; `items.rs` says what it
//!   keeps, and up to what size); and an `If-Match` check
//!   serializes the item it compares. One lock per request is what makes every request
//!   atomic and the whole API linearizable.
//! - No id is ever handed out twice: `last_id` only grows, deletes included,
//!   and never past 2^53-1 (the largest integer a JSON number holds exactly in every client); then creates get 507.
//! - With `--data`, a change's journal record is appended before the change
//!   is made, under the same lock: a write the journal refuses changes
//!   nothing.
//! - With `--data`, a failed journal write changes nothing either, in
//!   memory too (see below).
//! - A poisoned lock does not stop the server. Every mutation here is a
//!   plain field assignment or map insert, which cannot leave an item half
//!   written, so after a panic elsewhere the data is still whole and
//!   `lock` takes it back.
//!
//! # When the journal cannot be written
//!
//! A change is made in memory at once, and becomes durable a little later,
//! when the group commit that carries its record has been written and
//! synced (see `journal.rs`); the collection's lock is not held meanwhile,
//! or writers could not share a flush. If that flush fails (a full disk,
//! an I/O error), every change whose record was not yet durable must be
//! taken back: its writer gets 503, and a later restart will not see it.
//! So each collection keeps, for each change not yet durable, how to undo
//! it (`Undo`: the item as it was, or the id a create took), in record
//! order. After a failure, both collections are locked and every change
//! after the last durable record is undone, newest first; once the storage
//! has failed it refuses every new record, so nothing newer can come.
//! Undo records of durable changes are dropped at the collection's next
//! change (the journal says, as it takes a record, which are on disk), so
//! that a writer need not take the lock again after its flush (a second
//! lock per durable write, measured in scripts/PERFORMANCE.md); a clear's, which can hold a whole collection,
//! right after its flush. The alternative, reloading the files into memory,
//! would read the whole store back from a disk that has just failed,
//! holding both locks.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{ApiError, lock};
use crate::model::query::{ListQuery, Plan};
use crate::model::{MAX_SAFE_INTEGER, Resource, Todo, Widget};
pub use compaction::Durability;
use feed::{Change, Feed};
pub(crate) use files::write_items;
use items::{Collection, Items, Undo};
use journal::{Appended, Storage};
use load::State;

mod compaction;
mod direct;
mod edits;
pub mod feed;
mod files;
pub mod items;
mod journal;
mod load;

/// The journal of `--data PATH`: `PATH.journal`, beside the snapshot.
pub fn journal_of(path: &Path) -> std::path::PathBuf {
    files::journal_path(path)
}

/// How many items' JSON a collection keeps for reads.
pub const RENDERED_MAX: usize = 4096;

/// A representation: JSON, and its entity tag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Arc<Vec<u8>>,
    pub etag: String,
}

/// A list response's JSON, and how many items matched before any slicing
/// (`X-Total-Count`).
#[derive(Debug, Clone)]
pub struct Listed {
    pub rendered: Rendered,
    pub total: usize,
}

/// Serializes one of our own values, which always serialize: a failure is a
/// bug, logged here, and a 500.
pub fn render(value: &impl serde::Serialize) -> Result<Rendered, ApiError> {
    let body = serde_json::to_vec(value).map_err(|err| {
        log::error!(target: crate::logging::LOG, "cannot serialize a response body: {err}");
        ApiError::Internal
    })?;
    let etag = entity_tag(&body);
    let body = Arc::new(body);
    Ok(Rendered { body, etag })
}

/// A strong entity tag (RFC 9110 section 8.8.3) for a representation: a
/// hash of its bytes, so it changes exactly when the bytes change (up to a
/// 64-bit hash collision): `"<length in hex>-<hash, 16 hex digits>"`. The
/// same bytes give the same tag in every run of the same build
/// (`DefaultHasher::new()` has fixed keys).
pub fn entity_tag(bytes: &[u8]) -> String {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hasher.write(bytes);
    format!("\"{:x}-{:016x}\"", bytes.len(), hasher.finish())
}

/// Both collections, the per-collection item limit, and with `--data` the
/// files that keep them.
pub struct Store {
    shared: Arc<Shared>,
    /// The thread that compacts the journal (with `--data`).
    compactor: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    widgets: Mutex<Collection<Widget>>,
    todos: Mutex<Collection<Todo>>,
    max_items: usize,
    storage: Option<Storage>,
    /// Every acknowledged write, for `/api/events` (`feed.rs`).
    feed: Arc<Feed>,
}

/// A resource the store keeps, and which of its collections holds it.
pub trait Stored: Resource {
    fn collection(store: &Store) -> &Mutex<Collection<Self>>;
}

impl Stored for Widget {
    fn collection(store: &Store) -> &Mutex<Collection<Widget>> {
        &store.shared.widgets
    }
}

impl Stored for Todo {
    fn collection(store: &Store) -> &Mutex<Collection<Todo>> {
        &store.shared.todos
    }
}

impl Store {
    /// An empty store, in memory only, whose collections each hold at most
    /// `max_items`.
    pub fn new(max_items: usize) -> Store {
        Store::with(max_items, State::default(), None)
    }

    fn with(max_items: usize, state: State, storage: Option<Storage>) -> Store {
        Store {
            shared: Arc::new(Shared {
                widgets: Mutex::new(state.widgets.into()),
                todos: Mutex::new(state.todos.into()),
                max_items,
                storage,
                feed: Arc::default(),
            }),
            compactor: Mutex::new(None),
        }
    }

    /// The change feed: every acknowledged write, as an event.
    pub fn feed(&self) -> &Arc<Feed> {
        &self.shared.feed
    }

    /// A copy of every item, ascending id.
    pub fn all<T: Stored>(&self) -> Vec<T> {
        lock(T::collection(self)).items.values().cloned().collect()
    }

    /// The item's JSON and entity tag, if there is such an item: made under
    /// the lock by the first read after a change, then shared until the
    /// next change, as the list is.
    pub fn get<T: Stored>(&self, id: u64) -> Result<Option<Rendered>, ApiError> {
        let mut collection = lock(T::collection(self));
        if let Some(rendered) = collection.rendered.get(&id) {
            return Ok(Some(rendered.clone()));
        }
        let Some(item) = collection.items.get(id) else {
            return Ok(None);
        };
        let rendered = render(item)?;
        if collection.rendered.len() >= RENDERED_MAX {
            collection.rendered.clear();
        }
        collection.rendered.insert(id, rendered.clone());
        Ok(Some(rendered))
    }

    /// How many items the collection holds.
    pub fn count<T: Stored>(&self) -> usize {
        lock(T::collection(self)).items.len()
    }

    /// Whether the collection holds an item of this id.
    pub fn contains<T: Stored>(&self, id: u64) -> bool {
        lock(T::collection(self)).items.get(id).is_some()
    }

    /// 503 when the data files can no longer be written (with `--data`).
    pub fn writable(&self) -> Result<(), ApiError> {
        match &self.shared.storage {
            Some(storage) => storage.check_writable(),
            None => Ok(()),
        }
    }

    /// The ticket of a write's event (`feed.rs`), while the feed records:
    /// taken under the collection's lock, once the change is made.
    fn ticket(&self) -> Option<feed::Ticket<'_>> {
        let feed = &self.shared.feed;
        feed.recording
            .load(Ordering::Acquire)
            .then(|| feed.reserve())
    }

    /// Waits until the journal record of a change is on disk (with
    /// `--data`). If it cannot be written, every change not on disk is taken
    /// back (see the module comment) and the error returned.
    fn commit(&self, appended: Appended) -> Result<(), ApiError> {
        let Some(storage) = &self.shared.storage else {
            return Ok(());
        };
        storage
            .commit(appended.seq)
            .inspect_err(|_| self.shared.take_back(storage))
    }

    /// Adds an item with the next id; 507 when the collection is full or
    /// has handed out every id. Returns a copy of it and its JSON, once it
    /// is durable (with `--data`).
    ///
    /// Each write here goes the same way. Under the collection's lock:
    /// with `--data`, 503 first if the files can no longer be written; the
    /// change's checks; with `--data`, its journal record appended and how
    /// to undo it remembered (see the module comment); the change; its
    /// event's ticket when the feed records (`feed.rs`). After the lock:
    /// with `--data`, the commit; then the event published, or dropped
    /// unpublished (cancelled) on an error. In memory only, nothing of the
    /// journal runs.
    pub fn create<T: Stored>(&self, new: T::New) -> Result<(T, Rendered), ApiError> {
        let (item, appended, ticket) = {
            let mut collection = lock(T::collection(self));
            let (item, appended) = self.add(&mut collection, new)?;
            (item, appended, self.ticket())
        };
        if let Some(appended) = appended {
            self.commit(appended)?;
        }
        let rendered = render(&item)?;
        if let Some(ticket) = ticket {
            let (item_id, body) = (Some(item.id()), Some(rendered.body.as_slice()));
            ticket.publish(Change::Created, T::COLLECTION, item_id, body);
        }
        Ok((item, rendered))
    }

    /// Creates every item of `news`, in order, under one lock, and returns
    /// once all are durable: with `--data`, one flush for all instead of
    /// one each (`--generate` at start-up; 20,000 todos took 10 s). It
    /// stops at the first error; the items created before it stay. Made
    /// for start-up, before anyone subscribes: it publishes no event.
    pub fn create_all<T: Stored>(&self, news: Vec<T::New>) -> Result<(), ApiError> {
        let mut last = None;
        {
            let mut collection = lock(T::collection(self));
            for new in news {
                last = self.add(&mut collection, new)?.1.or(last);
            }
        }
        match last {
            Some(appended) => self.commit(appended),
            None => Ok(()),
        }
    }

    /// A create's change under the collection's lock: the item with the
    /// next id, and its journal record (with `--data`), not yet durable.
    fn add<T: Stored>(
        &self,
        collection: &mut Collection<T>,
        new: T::New,
    ) -> Result<(T, Option<Appended>), ApiError> {
        let storage = self.shared.storage.as_ref();
        if let Some(storage) = storage {
            storage.check_writable()?;
        }
        if collection.items.len() >= self.shared.max_items {
            return Err(ApiError::InsufficientStorage {
                subject: T::ITEM,
                limit: self.shared.max_items,
            });
        }
        if collection.last_id >= MAX_SAFE_INTEGER {
            return Err(no_ids_left::<T>());
        }
        let id = collection.last_id + 1;
        let item = T::create(id, new);
        let appended = storage.map(|storage| storage.put(&item)).transpose()?;
        collection.last_id = id;
        collection.items.insert(id, item.clone());
        collection.changed(Some(id));
        if let Some(appended) = appended {
            collection.remember(appended, Undo::Create(id));
        }
        Ok((item, appended))
    }

    /// Runs `check` and then `change` on the item under the lock, and
    /// returns the changed item's JSON, or `None` when there is no such
    /// item. An error from `check` (an `If-Match` that no longer matches)
    /// changes nothing. Returns once the change is durable (with `--data`).
    pub fn update<T: Stored>(
        &self,
        id: u64,
        check: impl FnOnce(&T) -> Result<(), ApiError>,
        change: impl FnOnce(&mut T),
    ) -> Result<Option<Rendered>, ApiError> {
        let (rendered, appended, ticket) = {
            let mut guard = lock(T::collection(self));
            let collection = &mut *guard;
            let Some(item) = self.checked(&mut collection.items, id, check)? else {
                return Ok(None);
            };
            let undo = match &self.shared.storage {
                None => {
                    change(item);
                    None
                }
                // The record is of the changed item, and the journal may
                // refuse it: change a copy, and keep it only once recorded.
                Some(storage) => {
                    let mut changed = item.clone();
                    change(&mut changed);
                    let appended = storage.put(&changed)?;
                    Some((appended, std::mem::replace(item, changed)))
                }
            };
            // One item's JSON, made under the lock as a read of it is
            // (`get`): a copy to make it from outside would cost as much.
            let rendered = render(&*item)?;
            collection.changed(Some(id));
            let appended = undo.map(|(appended, before)| {
                collection.remember(appended, Undo::Restore(before));
                appended
            });
            (rendered, appended, self.ticket())
        };
        if let Some(appended) = appended {
            self.commit(appended)?;
        }
        if let Some(ticket) = ticket {
            let body = Some(rendered.body.as_slice());
            ticket.publish(Change::Updated, T::COLLECTION, Some(id), body);
        }
        Ok(Some(rendered))
    }

    /// Under the collection's lock, before a change to item `id`: the item,
    /// once the data can be written (with `--data`) and `check` allows the
    /// change; `None` when there is no such item.
    fn checked<'c, T: Stored>(
        &self,
        items: &'c mut Items<T>,
        id: u64,
        check: impl FnOnce(&T) -> Result<(), ApiError>,
    ) -> Result<Option<&'c mut T>, ApiError> {
        if let Some(storage) = &self.shared.storage {
            storage.check_writable()?;
        }
        let Some(item) = items.get_mut(id) else {
            return Ok(None);
        };
        check(item)?;
        Ok(Some(item))
    }

    /// Removes every item of the collection (`--allow-reset`); `last_id`
    /// stays, so ids are never reused. Returns once durable.
    pub fn clear<T: Stored>(&self) -> Result<(), ApiError> {
        let (appended, ticket) = {
            let mut collection = lock(T::collection(self));
            let storage = self.shared.storage.as_ref();
            if let Some(storage) = storage {
                storage.check_writable()?;
            }
            let appended = storage.map(Storage::clear::<T>).transpose()?;
            let before = std::mem::take(&mut collection.items);
            collection.changed(None);
            if let Some(appended) = appended {
                collection.remember(appended, Undo::Clear(before));
            }
            (appended, self.ticket())
        };
        if let Some(appended) = appended {
            self.commit(appended)?;
            // The old items can be a whole collection: let them go now.
            lock(T::collection(self)).forget_up_to(appended.seq);
        }
        if let Some(ticket) = ticket {
            ticket.publish(Change::Reset, T::COLLECTION, None, None);
        }
        Ok(())
    }

    /// Removes the item if `check` allows, and returns it; `None` when
    /// there was none. Returns once the delete is durable (with `--data`).
    pub fn delete<T: Stored>(
        &self,
        id: u64,
        check: impl FnOnce(&T) -> Result<(), ApiError>,
    ) -> Result<Option<T>, ApiError> {
        let (deleted, appended, ticket) = {
            let mut collection = lock(T::collection(self));
            if self.checked(&mut collection.items, id, check)?.is_none() {
                return Ok(None);
            }
            let storage = self.shared.storage.as_ref();
            let appended = storage.map(|storage| storage.delete::<T>(id)).transpose()?;
            let Some(deleted) = collection.items.remove(id) else {
                return Ok(None);
            };
            collection.changed(Some(id));
            if let Some(appended) = appended {
                collection.remember(appended, Undo::Restore(deleted.clone()));
            }
            (deleted, appended, self.ticket())
        };
        if let Some(appended) = appended {
            self.commit(appended)?;
        }
        if let Some(ticket) = ticket {
            ticket.publish(Change::Deleted, T::COLLECTION, Some(id), None);
        }
        Ok(Some(deleted))
    }

    /// The items `query` selects, as a JSON array, and how many matched
    /// before slicing; see `items.rs` for what is kept between
    /// writes. Only the slice sent is serialized, under the lock: the
    /// items are borrowed, not copied.
    pub fn list<T: Stored>(&self, query: &ListQuery) -> Result<Listed, ApiError> {
        let plan = query.plan();
        if let Plan::Pattern = plan {
            return self.list_matching::<T>(query);
        }
        let mut guard = lock(T::collection(self));
        let collection = &mut *guard;
        let whole = matches!(plan, Plan::Whole);
        if whole && let Some(listed) = &collection.listed {
            return Ok(listed.clone());
        }
        let (page, total) = match plan {
            Plan::Sorted(sort) => {
                let ids = collection.orders.of(sort, query, &collection.items);
                let items = &collection.items;
                let page = ids[query.range(ids.len())].iter();
                (page.filter_map(|id| items.get(*id)).collect(), ids.len())
            }
            _ => query.run(collection.items.values(), collection.items.len()),
        };
        let listed = Listed {
            rendered: render(&page)?,
            total,
        };
        if whole && listed.rendered.body.len() <= collection.list_kept_max {
            collection.listed = Some(listed.clone());
        }
        Ok(listed)
    }

    /// [`Store::list`] for a query with a `_like` pattern, whose regular
    /// expression costs far more per item than a comparison: under the
    /// lock, only a copy of the items that pass the other filters; the
    /// pattern, the order and the slice run after the lock is released,
    /// so that the writes and reads waiting for it wait no longer than the
    /// copy takes.
    fn list_matching<T: Stored>(&self, query: &ListQuery) -> Result<Listed, ApiError> {
        let copies: Vec<T> = {
            let collection = lock(T::collection(self));
            let items = collection.items.values();
            items
                .filter(|item| query.prefilter(*item))
                .cloned()
                .collect()
        };
        let (page, total) = query.run(copies.iter(), copies.len());
        Ok(Listed {
            rendered: render(&page)?,
            total,
        })
    }

    /// The store, keeping whole lists only up to `bytes` rather than
    /// [`items::LIST_KEPT_MAX`] (tests use a small bound).
    pub fn keeping_lists_up_to(self, bytes: usize) -> Store {
        lock(&self.shared.widgets).list_kept_max = bytes;
        lock(&self.shared.todos).list_kept_max = bytes;
        self
    }

    /// Whether the collection keeps its whole list now (tests).
    pub fn keeps_list<T: Stored>(&self) -> bool {
        lock(T::collection(self)).listed.is_some()
    }
}

/// The 507 for a create once a collection has handed out every id.
fn no_ids_left<T: Resource>() -> ApiError {
    ApiError::Exhausted {
        detail: format!(
            "no ids left: every {} id up to {MAX_SAFE_INTEGER} has been handed out, and ids \
             are never reused; nothing was stored",
            T::ITEM
        ),
        hint: "keep new items in a new data file (--data)",
    }
}

impl Shared {
    /// After a failed journal write: takes back every change not on disk,
    /// in both collections (a flush carries records of both). Both locks
    /// are taken, widgets first as everywhere, so that no change is half
    /// made meanwhile.
    fn take_back(&self, storage: &Storage) {
        let mut widgets = lock(&self.widgets);
        let mut todos = lock(&self.todos);
        let durable = storage.durable();
        widgets.take_back_after(durable);
        todos.take_back_after(durable);
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
