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
//! - A poisoned lock does not stop the server. Every mutation here is a
//!   plain field assignment or map insert, which cannot leave an item half
//!   written, so after a panic elsewhere the data is still whole and
//!   [`lock`] takes it back.

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
use crate::storage::{COMPACT_AFTER, Snapshot, Storage};
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

impl<T> Collection<T> {
    /// Keeps an item's JSON for the reads that follow, within
    /// [`RENDERED_MAX`].
    fn keep_rendered(&mut self, id: u64, rendered: &Rendered) {
        if self.rendered.len() >= RENDERED_MAX {
            self.rendered.clear();
        }
        self.rendered.insert(id, rendered.clone());
    }
}

impl<T> From<Loaded<T>> for Collection<T> {
    fn from(loaded: Loaded<T>) -> Collection<T> {
        Collection {
            items: loaded.items,
            last_id: loaded.last_id,
            listed: None,
            rendered: BTreeMap::new(),
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
        append: impl FnOnce(&Storage) -> Result<u64, ApiError>,
    ) -> Result<Option<u64>, ApiError> {
        self.shared.storage.as_ref().map(append).transpose()
    }

    /// Waits until the journal record `seq` is on disk (with `--data`).
    fn commit(&self, seq: Option<u64>) -> Result<(), ApiError> {
        match (&self.shared.storage, seq) {
            (Some(storage), Some(seq)) => storage.commit(seq),
            _ => Ok(()),
        }
    }

    /// Adds an item with the next id; 507 when the collection is full or
    /// has handed out every id.
    /// Returns its id and its JSON, made under the lock from the item
    /// stored rather than from a copy, once the item is durable (with
    /// `--data`).
    pub fn create<T: Resource>(&self, new: T::New) -> Result<(u64, Vec<u8>), ApiError> {
        let (id, body, seq) = {
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
            let seq = self.journal(|s| s.put(&item))?;
            collection.last_id = id;
            collection.items.insert(id, item);
            collection.listed = None;
            (id, body, seq)
        };
        self.commit(seq)?;
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
        let (rendered, seq) = {
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
            let seq = match &self.shared.storage {
                None => {
                    change(item);
                    None
                }
                // The record is of the changed item, and the journal may
                // refuse it: change a copy, and keep it only once recorded.
                Some(storage) => {
                    let mut changed = item.clone();
                    change(&mut changed);
                    let seq = storage.put(&changed)?;
                    *item = changed;
                    Some(seq)
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
            (rendered, seq)
        };
        self.commit(seq)?;
        rendered.map(Some)
    }

    /// Removes every item of the collection (`--allow-reset`); `last_id`
    /// stays, so ids are never reused. Returns once durable.
    pub fn clear<T: Resource>(&self) -> Result<(), ApiError> {
        let seq = {
            let mut collection = lock(T::slot(self));
            self.writable()?;
            let seq = self.journal(|s| s.clear::<T>())?;
            collection.items.clear();
            collection.listed = None;
            collection.rendered.clear();
            seq
        };
        self.commit(seq)
    }

    /// Removes the item if `check` allows (given its [`Current`] version);
    /// `false` when there was none. Returns once the delete is durable (with
    /// `--data`).
    pub fn delete<T: Resource>(
        &self,
        id: u64,
        check: impl FnOnce(Current<'_, T>) -> Result<(), ApiError>,
    ) -> Result<bool, ApiError> {
        let seq = {
            let mut collection = lock(T::slot(self));
            self.writable()?;
            let Some(item) = collection.items.get(id) else {
                return Ok(false);
            };
            check(Current {
                item,
                kept: collection.rendered.get(&id),
            })?;
            let seq = self.journal(|s| s.delete::<T>(id))?;
            collection.items.remove(id);
            collection.listed = None;
            collection.rendered.remove(&id);
            seq
        };
        self.commit(seq)?;
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
