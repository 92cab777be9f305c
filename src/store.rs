//! The data: one `Mutex`-guarded collection per resource, and id allocation.
//!
//! Invariants, stated as absences:
//! - No module but this one locks. Handlers call a `Store` method, which
//!   locks once, does the whole read-modify-write, and returns owned data;
//!   serializing and writing to the socket happen after the lock is gone,
//!   except for the first read of the list or of an item after a change,
//!   which serializes it once under the lock and caches it for the reads
//!   that follow (`list_json`, `get_json`), and for creates and updates,
//!   which serialize the item stored rather than copy it out.
//!   That one lock per request is what makes every request atomic and the
//!   whole API linearizable.
//! - No id is ever handed out twice: `last_id` only grows, deletes included,
//!   and never past 2^53-1 (API-CONTRACT.md); then creates get 507.
//! - With `--data`, a change's journal record is appended before the change
//!   is made, under the same lock: a write the journal refuses changes
//!   nothing.
//! - With `--data`, a failed journal write changes nothing either, in
//!   memory too (see below).
//! - A poisoned lock does not stop the server. Every mutation here is a
//!   plain field assignment or map insert, which cannot leave an item half
//!   written, so after a panic elsewhere the data is still whole and
//!   [`lock`] takes it back.
//!
//! # When the journal cannot be written
//!
//! A change is made in memory at once, and becomes durable a little later,
//! when the group commit that carries its record has been written and
//! synced (see `storage.rs`); the collection's lock is not held meanwhile,
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
//! that a writer need not take the lock again after its flush (that cost
//! durable writes about 5%); a clear's, which can hold a whole collection,
//! right after its flush. The alternative, reloading the files into memory,
//! would read the whole store back from a disk that has just failed,
//! holding both locks.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::ApiError;
use crate::items::Items;
use crate::load::{Loaded, State};
use crate::query::{FieldValue, ListQuery, Queryable};
use crate::resource::Resource;
use crate::response::{Tag, decimal};
use crate::storage::{Appended, COMPACT_AFTER, Snapshot, Storage};
use crate::todos::Todo;
use crate::validate::MAX_SAFE_INTEGER;
use crate::widgets::Widget;

/// The items of one resource, keyed by id so listing is in ascending id.
#[derive(Debug)]
pub struct Collection<T> {
    items: Items<T>,
    last_id: u64,
    /// The whole collection as a JSON array, made by the first list read
    /// after a change and dropped by the next change, so that reads between
    /// writes share one serialization.
    listed: Option<Listed>,
    /// Items as JSON, made by the first read of each after its last change
    /// and dropped by the next, likewise. At most [`RENDERED_MAX`].
    rendered: BTreeMap<u64, Rendered>,
    /// With `--data`: how to take back each change whose journal record is
    /// not yet durable, with that record's `seq`, oldest first.
    undo: Vec<(u64, Undo<T>)>,
}

/// How to take back one change made in memory (see the module comment).
#[derive(Debug)]
enum Undo<T> {
    /// A create: remove the item, and give its id back.
    Create(u64),
    /// An update or a delete: put the item back as it was.
    Restore(T),
    /// A clear: put every item back.
    Clear(Items<T>),
}

/// How many items' JSON a collection keeps; past that, it starts afresh.
pub const RENDERED_MAX: usize = 4096;

/// One item's response body, with its entity tag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Arc<Vec<u8>>,
    pub etag: Tag,
}

/// A list response's body, with its entity tag and how many items matched
/// before any slicing (`X-Total-Count`).
#[derive(Debug, Clone)]
pub struct Listed {
    pub body: Arc<Vec<u8>>,
    pub etag: Tag,
    pub total: usize,
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Collection {
            items: Items::default(),
            last_id: 0,
            listed: None,
            rendered: BTreeMap::new(),
            undo: Vec::new(),
        }
    }
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
}

/// Which of the store's collections holds a resource.
pub trait Stored: Sized {
    fn slot(store: &Store) -> &Mutex<Collection<Self>>;
}

impl Stored for Widget {
    fn slot(store: &Store) -> &Mutex<Collection<Widget>> {
        &store.shared.widgets
    }
}

impl Stored for Todo {
    fn slot(store: &Store) -> &Mutex<Collection<Todo>> {
        &store.shared.todos
    }
}

/// The one place a lock is taken; see the module comment on poisoning.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| {
        log::warn!(
            "a handler panicked while holding the store lock; the data is intact, carrying on"
        );
        mutex.clear_poison();
        poisoned.into_inner()
    })
}

/// Serializes one of our own values. They always serialize, so a failure
/// is a bug: logged once here, and a 500.
fn write_json(out: &mut Vec<u8>, value: &impl serde::Serialize) -> Result<(), ApiError> {
    serde_json::to_writer(out, value).map_err(|err| {
        log::error!("cannot serialize a response body: {err}");
        ApiError::Internal
    })
}

/// Items as a JSON array, each as [`item_json`] writes it.
fn items_json<T: Queryable>(items: &[&T]) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::with_capacity(2 + items.len() * 80);
    out.push(b'[');
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_item(&mut out, *item)?;
    }
    out.push(b']');
    Ok(out)
}

/// One item as JSON: the bytes serde's derived `Serialize` makes (a test
/// holds them equal), written field by field from the item's
/// [`Queryable`] description instead, with less work on every write: the
/// field names are constants that need no escaping, and only text goes
/// through serde_json. (A PUT went from 36,100 to 33,900 instructions with
/// this and the inline entity tags; see README, "Performance".)
fn item_json<T: Queryable>(item: &T) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::with_capacity(128);
    write_item(&mut out, item)?;
    Ok(out)
}

/// An item as it stands under the store's lock, for a check before a
/// change (`If-Match`).
pub struct Current<'a, T> {
    item: &'a T,
    /// Its JSON, when the store keeps it for reads.
    kept: Option<&'a Rendered>,
}

impl<T: Queryable> Current<'_, T> {
    /// The item's entity tag: the one its GET sends. Serialized only when
    /// the store keeps no JSON for it.
    pub fn tag(&self) -> Result<Tag, ApiError> {
        match self.kept {
            Some(rendered) => Ok(rendered.etag.clone()),
            None => item_json(self.item).map(|body| Tag::of(&body)),
        }
    }
}

fn write_item<T: Queryable>(out: &mut Vec<u8>, item: &T) -> Result<(), ApiError> {
    out.push(b'{');
    for (index, (name, _)) in T::FIELDS.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match item.field(index) {
            FieldValue::Integer(n) => out.extend_from_slice(decimal(n).as_ref()),
            FieldValue::Text(text) => write_json(out, &text)?,
            FieldValue::Boolean(true) => out.extend_from_slice(b"true"),
            FieldValue::Boolean(false) => out.extend_from_slice(b"false"),
        }
    }
    out.push(b'}');
    Ok(())
}

fn listed(body: Vec<u8>, total: usize) -> Listed {
    let Rendered { body, etag } = Rendered::new(body);
    Listed { body, etag, total }
}

impl Rendered {
    fn new(body: Vec<u8>) -> Rendered {
        Rendered {
            etag: Tag::of(&body),
            body: Arc::new(body),
        }
    }
}

impl<T: Resource> Collection<T> {
    /// Keeps an item's JSON for the reads that follow, within
    /// [`RENDERED_MAX`].
    fn keep_rendered(&mut self, id: u64, rendered: &Rendered) {
        if self.rendered.len() >= RENDERED_MAX {
            self.rendered.clear();
        }
        self.rendered.insert(id, rendered.clone());
    }

    /// Remembers how to take back the change whose record was just
    /// appended (with `--data`), and forgets those of changes now durable.
    fn remember(&mut self, appended: Option<Appended>, undo: Undo<T>) {
        if let Some(Appended { seq, durable }) = appended {
            self.forget_up_to(durable);
            self.undo.push((seq, undo));
        }
    }

    /// Forgets the undo records of changes up to `seq`: they are durable.
    fn forget_up_to(&mut self, seq: u64) {
        let durable = self.undo.partition_point(|(recorded, _)| *recorded <= seq);
        self.undo.drain(..durable);
    }

    /// Takes back every change recorded after `durable`, newest first.
    fn take_back_after(&mut self, durable: u64) {
        while let Some((seq, _)) = self.undo.last()
            && *seq > durable
        {
            let Some((_, undo)) = self.undo.pop() else {
                break;
            };
            match undo {
                Undo::Create(id) => {
                    self.items.remove(id);
                    // Ids are handed out in order, so this was the last.
                    self.last_id = id - 1;
                }
                Undo::Restore(item) => {
                    self.items.insert(item.id(), item);
                }
                Undo::Clear(items) => self.items = items,
            }
            self.listed = None;
            self.rendered.clear();
        }
    }
}

impl<T> From<Loaded<T>> for Collection<T> {
    fn from(loaded: Loaded<T>) -> Collection<T> {
        Collection {
            items: loaded.items,
            last_id: loaded.last_id,
            listed: None,
            rendered: BTreeMap::new(),
            undo: Vec::new(),
        }
    }
}

impl Store {
    /// An empty store, in memory only, whose collections each hold at most
    /// `max_items`.
    pub fn new(max_items: usize) -> Store {
        Store::with(max_items, State::default(), None)
    }

    /// A store kept in the data files at `path` (see `storage.rs`), loaded
    /// from them. The error names the file and what is wrong with it.
    pub fn open(max_items: usize, path: &Path) -> Result<Store, String> {
        Store::open_compacting_after(max_items, path, COMPACT_AFTER)
    }

    /// [`Store::open`], compacting after `records` journal records rather
    /// than [`COMPACT_AFTER`] (tests use a small number).
    pub fn open_compacting_after(
        max_items: usize,
        path: &Path,
        records: u64,
    ) -> Result<Store, String> {
        let (storage, state) = Storage::open(path, records, max_items)?;
        let store = Store::with(max_items, state, Some(storage));
        let shared = Arc::clone(&store.shared);
        let compactor = std::thread::Builder::new()
            .name("compactor".into())
            .spawn(move || shared.compact_when_due())
            .map_err(|err| format!("cannot start the compaction thread: {err}"))?;
        *lock(&store.compactor) = Some(compactor);
        Ok(store)
    }

    fn with(max_items: usize, state: State, storage: Option<Storage>) -> Store {
        Store {
            shared: Arc::new(Shared {
                widgets: Mutex::new(state.widgets.into()),
                todos: Mutex::new(state.todos.into()),
                max_items,
                storage,
            }),
            compactor: Mutex::new(None),
        }
    }

    /// With `--data`: writes a final snapshot and empties the journal. Call
    /// it once the server has stopped; later writes are still journaled.
    pub fn close(&self) {
        let Some(storage) = &self.shared.storage else {
            return;
        };
        storage.close();
        if let Some(compactor) = lock(&self.compactor).take() {
            let _ = compactor.join();
        }
        if let Err(err) = self.shared.compact() {
            log::error!("cannot write the final snapshot: {err}; the journal keeps every change");
        }
    }

    /// Every item, ascending id.
    pub fn list<T: Resource>(&self) -> Vec<T> {
        lock(T::slot(self)).items.values().cloned().collect()
    }

    /// Every item, ascending id, as a JSON array. Serialized under the lock
    /// on the first read after a change, then shared until the next change.
    pub fn list_json<T: Resource>(&self) -> Result<Listed, ApiError> {
        let mut collection = lock(T::slot(self));
        if let Some(listed) = &collection.listed {
            return Ok(listed.clone());
        }
        let items: Vec<&T> = collection.items.values().collect();
        let listed = listed(items_json(&items)?, items.len());
        collection.listed = Some(listed.clone());
        Ok(listed)
    }

    /// The items `query` selects, as a JSON array. Only the slice sent is
    /// serialized (under the lock: the items are borrowed, not copied).
    pub fn query<T: Resource>(&self, query: &ListQuery) -> Result<Listed, ApiError> {
        let collection = lock(T::slot(self));
        let (page, total) = query.run(&collection.items);
        Ok(listed(items_json(&page)?, total))
    }

    /// One item as JSON, with its entity tag; `None` when there is no such
    /// item. Serialized under the lock on the first read after a change,
    /// then shared until the next change, as [`Store::list_json`] does.
    pub fn get_json<T: Resource>(&self, id: u64) -> Result<Option<Rendered>, ApiError> {
        let mut collection = lock(T::slot(self));
        if let Some(rendered) = collection.rendered.get(&id) {
            return Ok(Some(rendered.clone()));
        }
        let Some(item) = collection.items.get(id) else {
            return Ok(None);
        };
        let rendered = Rendered::new(item_json(item)?);
        collection.keep_rendered(id, &rendered);
        Ok(Some(rendered))
    }

    pub fn contains<T: Resource>(&self, id: u64) -> bool {
        lock(T::slot(self)).items.contains(id)
    }

    /// 503 when the data files can no longer be written (with `--data`).
    pub fn writable(&self) -> Result<(), ApiError> {
        match &self.shared.storage {
            Some(storage) => storage.check_writable(),
            None => Ok(()),
        }
    }

    /// Appends a change's journal record with `append` (with `--data`);
    /// `None` in memory only. Call it under the collection's lock, before
    /// making the change, and make it only if this succeeds.
    fn journal(
        &self,
        append: impl FnOnce(&Storage) -> Result<Appended, ApiError>,
    ) -> Result<Option<Appended>, ApiError> {
        self.shared.storage.as_ref().map(append).transpose()
    }

    /// Waits until the journal record of a change is on disk (with
    /// `--data`). If it cannot be written, every change not on disk is taken
    /// back (see the module comment) and the error returned.
    fn commit(&self, appended: Option<Appended>) -> Result<(), ApiError> {
        let (Some(storage), Some(appended)) = (&self.shared.storage, appended) else {
            return Ok(());
        };
        storage
            .commit(appended.seq)
            .inspect_err(|_| self.shared.take_back(storage))
    }

    /// Adds an item with the next id; 507 when the collection is full or
    /// has handed out every id.
    /// Returns its id and its JSON, made under the lock from the item
    /// stored rather than from a copy, once the item is durable (with
    /// `--data`).
    pub fn create<T: Resource>(&self, new: T::New) -> Result<(u64, Vec<u8>), ApiError> {
        let (id, body, appended) = {
            let mut collection = lock(T::slot(self));
            self.writable()?;
            if collection.items.len() >= self.shared.max_items {
                return Err(ApiError::InsufficientStorage {
                    kind: T::KIND,
                    limit: self.shared.max_items,
                });
            }
            if collection.last_id >= MAX_SAFE_INTEGER {
                return Err(no_ids_left::<T>());
            }
            let id = collection.last_id + 1;
            let item = T::create(id, new);
            let body = item_json(&item)?;
            let appended = self.journal(|s| s.put(&item))?;
            collection.last_id = id;
            collection.items.insert(id, item);
            collection.listed = None;
            collection.remember(appended, Undo::Create(id));
            (id, body, appended)
        };
        self.commit(appended)?;
        Ok((id, body))
    }

    /// Runs `check` and then `change` on the item under the lock and
    /// returns the result as JSON, or `None` when there is no such item. An
    /// error from `check` (an `If-Match` that no longer matches) changes
    /// nothing. `check` gets the item's [`Current`] version. The JSON is made under the lock and kept for the reads that
    /// follow, as [`Store::get_json`] does. Returns once the change is
    /// durable (with `--data`).
    pub fn update<T: Resource>(
        &self,
        id: u64,
        check: impl FnOnce(Current<'_, T>) -> Result<(), ApiError>,
        change: impl FnOnce(&mut T),
    ) -> Result<Option<Rendered>, ApiError> {
        let (rendered, appended) = {
            let mut guard = lock(T::slot(self));
            self.writable()?;
            let collection = &mut *guard;
            let Some(item) = collection.items.get_mut(id) else {
                return Ok(None);
            };
            check(Current {
                item,
                kept: collection.rendered.get(&id),
            })?;
            let (appended, before) = match &self.shared.storage {
                None => {
                    change(item);
                    (None, None)
                }
                // The record is of the changed item, and the journal may
                // refuse it: change a copy, and keep it only once recorded.
                Some(storage) => {
                    let mut changed = item.clone();
                    change(&mut changed);
                    let appended = storage.put(&changed)?;
                    (Some(appended), Some(std::mem::replace(item, changed)))
                }
            };
            let rendered = item_json(&*item).map(Rendered::new);
            collection.listed = None;
            match &rendered {
                Ok(rendered) => collection.keep_rendered(id, rendered),
                Err(_) => {
                    collection.rendered.remove(&id);
                }
            }
            if let Some(before) = before {
                collection.remember(appended, Undo::Restore(before));
            }
            (rendered, appended)
        };
        self.commit(appended)?;
        rendered.map(Some)
    }

    /// Removes every item of the collection (`--allow-reset`); `last_id`
    /// stays, so ids are never reused. Returns once durable.
    pub fn clear<T: Resource>(&self) -> Result<(), ApiError> {
        let appended = {
            let mut collection = lock(T::slot(self));
            self.writable()?;
            let appended = self.journal(|s| s.clear::<T>())?;
            let before = std::mem::take(&mut collection.items);
            collection.listed = None;
            collection.rendered.clear();
            collection.remember(appended, Undo::Clear(before));
            appended
        };
        self.commit(appended)?;
        if let Some(Appended { seq, .. }) = appended {
            // The old items can be a whole collection: let them go now.
            lock(T::slot(self)).forget_up_to(seq);
        }
        Ok(())
    }

    /// Removes the item if `check` allows (given its [`Current`] version);
    /// `false` when there was none. Returns once the delete is durable (with
    /// `--data`).
    pub fn delete<T: Resource>(
        &self,
        id: u64,
        check: impl FnOnce(Current<'_, T>) -> Result<(), ApiError>,
    ) -> Result<bool, ApiError> {
        let appended = {
            let mut collection = lock(T::slot(self));
            self.writable()?;
            let Some(item) = collection.items.get(id) else {
                return Ok(false);
            };
            check(Current {
                item,
                kept: collection.rendered.get(&id),
            })?;
            let appended = self.journal(|s| s.delete::<T>(id))?;
            if let Some(before) = collection.items.remove(id) {
                collection.remember(appended, Undo::Restore(before));
            }
            collection.listed = None;
            collection.rendered.remove(&id);
            appended
        };
        self.commit(appended)?;
        Ok(true)
    }
}

/// The 507 for a create once a collection has handed out every id.
fn no_ids_left<T: Resource>() -> ApiError {
    ApiError::Exhausted {
        detail: format!(
            "no ids left: every {} id up to {MAX_SAFE_INTEGER} has been handed out, and ids \
             are never reused; nothing was stored",
            T::KIND
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

    /// The compaction thread: compacts whenever the journal has grown enough,
    /// until the store is closed.
    fn compact_when_due(&self) {
        let Some(storage) = &self.storage else {
            return;
        };
        while storage.wait_for_compaction() {
            if let Err(err) = self.compact() {
                log::warn!("cannot compact the journal: {err}; it keeps growing until a retry");
            }
        }
    }

    /// Writes a snapshot of both collections and drops the journal records
    /// it covers. The copy and the cut are taken under both collections'
    /// locks (widgets first, as everywhere), so they match exactly; the
    /// writing happens after, with no lock held.
    fn compact(&self) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: &[&str] = &[
        "Buy milk",
        "",
        "quote \" backslash \\ slash /",
        "control \u{0} \u{1f} \n \t \r \u{8} \u{c}",
        "non-ASCII: 10 €, naïve, 日本, 🦀, \u{2028}",
        "text longer than thirty bytes, kept on the heap rather than inline",
    ];

    #[test]
    fn item_json_writes_what_serde_writes() {
        for (n, text) in TEXTS.iter().enumerate() {
            let todo = Todo {
                id: n as u64 + 1,
                user_id: 9_007_199_254_740_991,
                title: (*text).into(),
                completed: n % 2 == 0,
            };
            let widget = Widget {
                id: u64::MAX,
                price: (*text).into(),
                quality: TEXTS[(n + 1) % TEXTS.len()].into(),
            };
            assert_eq!(item_json(&todo).ok(), serde_json::to_vec(&todo).ok());
            assert_eq!(item_json(&widget).ok(), serde_json::to_vec(&widget).ok());
        }
    }

    /// A directory whose journal, `data.json.journal`, is a link to
    /// /dev/full, where every write fails with ENOSPC; its snapshot holds
    /// `fixture`.
    fn failing_files(name: &str, fixture: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("widgets-todos-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("/dev/full", dir.join("data.json.journal")).unwrap();
        std::fs::write(dir.join("data.json"), fixture).unwrap();
        dir
    }

    fn new_todo() -> crate::todos::NewTodo {
        use crate::request::Input;
        use std::borrow::Cow;
        let fields = vec![
            (Cow::Borrowed("userId"), Input::Json(1.into())),
            (Cow::Borrowed("title"), Input::Json("a".into())),
        ];
        Todo::parse_new(fields).unwrap()
    }

    fn last_ids_and_undo(store: &Store) -> (u64, u64, usize) {
        let widgets = lock(&store.shared.widgets);
        let todos = lock(&store.shared.todos);
        (
            widgets.last_id,
            todos.last_id,
            widgets.undo.len() + todos.undo.len(),
        )
    }

    /// What the API cannot show while writes are refused: a create whose
    /// journal write failed gives its id back, and keeps nothing to undo.
    #[test]
    fn a_failed_create_gives_its_id_back() {
        let dir = failing_files("failed-create", "{}");
        let store = Store::open(100, &dir.join("data.json")).unwrap();
        assert!(matches!(
            store.create::<Todo>(new_todo()),
            Err(ApiError::StorageUnavailable { .. })
        ));
        assert!(store.list::<Todo>().is_empty());
        assert_eq!(last_ids_and_undo(&store), (0, 0, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writes waiting together share one flush (group commit). When it
    /// fails, every one of them is taken back, of every kind, in both
    /// collections.
    #[test]
    fn a_failed_group_commit_takes_back_every_change_in_it() {
        let dir = failing_files(
            "failed-group",
            r#"{"todos": [{"id": 1, "userId": 1, "title": "a"},
                          {"id": 2, "userId": 1, "title": "b"}],
                "widgets": [{"id": 1, "price": "$1", "quality": "ok"}]}"#,
        );
        let store = Store::open(100, &dir.join("data.json")).unwrap();
        let before = (store.list::<Todo>(), store.list::<Widget>());
        let storage = store.shared.storage.as_ref().unwrap();

        storage.hold_flushes(true);
        let results = std::thread::scope(|scope| {
            let store = &store;
            let writes = [
                scope.spawn(move || store.create::<Todo>(new_todo()).map(drop)),
                scope.spawn(move || store.create::<Todo>(new_todo()).map(drop)),
                scope.spawn(move || {
                    store
                        .update::<Todo>(1, |_| Ok(()), |todo| todo.completed = true)
                        .map(drop)
                }),
                scope.spawn(move || store.delete::<Todo>(2, |_| Ok(())).map(|_| ())),
                scope.spawn(move || store.clear::<Widget>()),
            ];
            // Each change is made, and waits for the flush held back.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while last_ids_and_undo(store).2 < writes.len() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the writes never came"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(store.list::<Todo>().len(), 3, "two created, one deleted");
            assert!(store.list::<Widget>().is_empty());
            // One flush now carries all five records, and fails.
            storage.hold_flushes(false);
            writes.map(|write| write.join().unwrap())
        });

        for result in results {
            assert!(
                matches!(result, Err(ApiError::StorageUnavailable { .. })),
                "{result:?}"
            );
        }
        assert_eq!((store.list::<Todo>(), store.list::<Widget>()), before);
        assert_eq!(last_ids_and_undo(&store), (1, 2, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Durable changes need no undo record: each is dropped at the next
    /// change, and a clear's (the whole collection) right after its flush.
    #[test]
    fn durable_changes_keep_no_undo_records() {
        let dir = failing_files("durable-undo", "{}");
        std::fs::remove_file(dir.join("data.json.journal")).unwrap();
        let store = Store::open(100, &dir.join("data.json")).unwrap();
        for _ in 0..50 {
            store.create::<Todo>(new_todo()).unwrap();
        }
        assert_eq!(last_ids_and_undo(&store), (0, 50, 1));
        store.clear::<Todo>().unwrap();
        assert_eq!(last_ids_and_undo(&store), (0, 50, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn items_json_writes_what_serde_writes() {
        let todos: Vec<Todo> = TEXTS
            .iter()
            .enumerate()
            .map(|(n, text)| Todo {
                id: n as u64,
                user_id: 1,
                title: (*text).into(),
                completed: false,
            })
            .collect();
        for count in [0, 1, todos.len()] {
            let items: Vec<&Todo> = todos[..count].iter().collect();
            assert_eq!(items_json(&items).ok(), serde_json::to_vec(&items).ok());
        }
    }
}
