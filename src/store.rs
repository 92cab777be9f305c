//! The data: one `Mutex`-guarded collection per resource, and id allocation.
//!
//! Invariants, stated as absences:
//! - No module but this one locks. Handlers call a `Store` method, which
//!   locks once, does the whole read-modify-write, and returns owned data;
//!   serializing and writing to the socket happen after the lock is gone,
//!   except for a list read after a change, which serializes the list once
//!   under the lock and caches it for the reads that follow (`list_json`).
//!   That one lock per request is what makes every request atomic and the
//!   whole API linearizable.
//! - No id is ever handed out twice: `last_id` only grows, deletes included.
//! - A poisoned lock does not stop the server. Every mutation here is a
//!   plain field assignment or map insert, which cannot leave an item half
//!   written, so after a panic elsewhere the data is still whole and
//!   [`lock`] takes it back.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::ApiError;
use crate::resource::Resource;
use crate::todos::Todo;
use crate::widgets::Widget;

/// The items of one resource, keyed by id so listing is in ascending id.
#[derive(Debug)]
pub struct Collection<T> {
    items: BTreeMap<u64, T>,
    last_id: u64,
    /// The whole collection as a JSON array, made by the first list read
    /// after a change and dropped by the next change, so that reads between
    /// writes share one serialization.
    listed: Option<Arc<Vec<u8>>>,
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Collection {
            items: BTreeMap::new(),
            last_id: 0,
            listed: None,
        }
    }
}

/// Both collections and the per-collection item limit.
#[derive(Debug)]
pub struct Store {
    widgets: Mutex<Collection<Widget>>,
    todos: Mutex<Collection<Todo>>,
    max_items: usize,
}

/// Which of the store's collections holds a resource.
pub trait Stored: Sized {
    fn slot(store: &Store) -> &Mutex<Collection<Self>>;
}

impl Stored for Widget {
    fn slot(store: &Store) -> &Mutex<Collection<Widget>> {
        &store.widgets
    }
}

impl Stored for Todo {
    fn slot(store: &Store) -> &Mutex<Collection<Todo>> {
        &store.todos
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

impl Store {
    /// An empty store whose collections each hold at most `max_items`.
    pub fn new(max_items: usize) -> Store {
        Store {
            widgets: Mutex::default(),
            todos: Mutex::default(),
            max_items,
        }
    }

    /// Every item, ascending id.
    pub fn list<T: Resource>(&self) -> Vec<T> {
        lock(T::slot(self)).items.values().cloned().collect()
    }

    /// Every item, ascending id, as a JSON array. Serialized under the lock
    /// on the first read after a change, then shared until the next change.
    pub fn list_json<T: Resource>(&self) -> Result<Arc<Vec<u8>>, serde_json::Error> {
        let mut collection = lock(T::slot(self));
        if let Some(listed) = &collection.listed {
            return Ok(Arc::clone(listed));
        }
        let items: Vec<&T> = collection.items.values().collect();
        let listed = Arc::new(serde_json::to_vec(&items)?);
        collection.listed = Some(Arc::clone(&listed));
        Ok(listed)
    }

    pub fn get<T: Resource>(&self, id: u64) -> Option<T> {
        lock(T::slot(self)).items.get(&id).cloned()
    }

    pub fn contains<T: Resource>(&self, id: u64) -> bool {
        lock(T::slot(self)).items.contains_key(&id)
    }

    /// Adds an item with the next id; 507 when the collection is full.
    pub fn create<T: Resource>(&self, new: T::New) -> Result<(u64, T), ApiError> {
        let mut collection = lock(T::slot(self));
        if collection.items.len() >= self.max_items {
            return Err(ApiError::InsufficientStorage {
                kind: T::KIND,
                limit: self.max_items,
            });
        }
        collection.last_id += 1;
        let id = collection.last_id;
        let item = T::create(id, new);
        collection.items.insert(id, item.clone());
        collection.listed = None;
        Ok((id, item))
    }

    /// Runs `change` on the item under the lock and returns the result, or
    /// `None` when there is no such item.
    pub fn update<T: Resource>(&self, id: u64, change: impl FnOnce(&mut T)) -> Option<T> {
        let mut collection = lock(T::slot(self));
        let item = collection.items.get_mut(&id)?;
        change(item);
        let item = item.clone();
        collection.listed = None;
        Some(item)
    }

    /// Removes the item; `false` when there was none.
    pub fn delete<T: Resource>(&self, id: u64) -> bool {
        let mut collection = lock(T::slot(self));
        let removed = collection.items.remove(&id).is_some();
        if removed {
            collection.listed = None;
        }
        removed
    }
}
