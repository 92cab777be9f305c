//! The items of one collection, by id, packed densely.
//!
//! A `BTreeMap<u64, T>` would do, but ids are handed out in order, and a
//! B-tree filled in order splits each full leaf in two and never fills
//! either half again: its leaves stay about half empty. For a collection
//! that only grows that is twice the memory per item.
//!
//! [`Items`] keeps items in runs of [`RUN`] consecutive ids instead: a
//! B-tree of small sorted vectors, one per run. Ids handed out in order
//! fill each run completely; a lookup is one tree search and a binary
//! search of at most `RUN` ids; removing an item shifts at most `RUN - 1`
//! others. A run that empties is dropped, and one that has become mostly
//! empty gives memory back, so memory stays proportional to the items
//! kept, whatever was deleted.
//!
//! What that saves, measured with `scripts/loadmem.py`: scripts/PERFORMANCE.md,
//! "Memory".

use std::collections::BTreeMap;

/// Ids per run. A run of todos is under 2 KiB.
pub const RUN: u64 = 32;

/// Items by id, in ascending id order.
#[derive(Debug)]
pub struct Items<T> {
    /// Run number (`id / RUN`) to the run's items, sorted by id.
    runs: BTreeMap<u64, Vec<(u64, T)>>,
    len: usize,
}

impl<T> Default for Items<T> {
    fn default() -> Self {
        Items {
            runs: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<T> Items<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, id: u64) -> Option<&T> {
        let run = self.runs.get(&(id / RUN))?;
        let at = run.binary_search_by_key(&id, |(k, _)| *k).ok()?;
        Some(&run[at].1)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let run = self.runs.get_mut(&(id / RUN))?;
        let at = run.binary_search_by_key(&id, |(k, _)| *k).ok()?;
        Some(&mut run[at].1)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Adds the item, or replaces the one with the same id and returns it.
    pub fn insert(&mut self, id: u64, item: T) -> Option<T> {
        let run = self.runs.entry(id / RUN).or_default();
        match run.binary_search_by_key(&id, |(k, _)| *k) {
            Ok(at) => Some(std::mem::replace(&mut run[at].1, item)),
            Err(at) => {
                run.insert(at, (id, item));
                self.len += 1;
                None
            }
        }
    }

    /// Removes the item with this id and returns it.
    pub fn remove(&mut self, id: u64) -> Option<T> {
        let key = id / RUN;
        let run = self.runs.get_mut(&key)?;
        let at = run.binary_search_by_key(&id, |(k, _)| *k).ok()?;
        let (_, item) = run.remove(at);
        self.len -= 1;
        if run.is_empty() {
            self.runs.remove(&key);
        } else if run.len() * 4 <= run.capacity() {
            run.shrink_to(run.len() * 2);
        }
        Some(item)
    }

    pub fn clear(&mut self) {
        self.runs.clear();
        self.len = 0;
    }

    /// Every item, ascending id.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.runs.values().flatten().map(|(_, item)| item)
    }
}

impl<T> FromIterator<(u64, T)> for Items<T> {
    fn from_iter<I: IntoIterator<Item = (u64, T)>>(pairs: I) -> Items<T> {
        let mut items = Items::default();
        for (id, item) in pairs {
            items.insert(id, item);
        }
        items
    }
}

#[cfg(test)]
#[path = "items_tests.rs"]
mod tests;
