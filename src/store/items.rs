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
        self.runs
            .values()
            .flat_map(|run| run.iter().map(|(_, item)| item))
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
mod tests {
    use super::*;

    fn ids(items: &Items<u64>) -> Vec<u64> {
        items.values().copied().collect()
    }

    #[test]
    fn behaves_as_an_ordered_map() {
        let mut items = Items::default();
        // Out of order, across runs, with a replacement.
        for id in [70, 3, 31, 32, 1, 64, 33] {
            assert_eq!(items.insert(id, id), None);
        }
        assert_eq!(items.insert(31, 31), Some(31));
        assert_eq!(items.len(), 7);
        assert_eq!(ids(&items), [1, 3, 31, 32, 33, 64, 70]);
        assert_eq!(items.get(32), Some(&32));
        assert_eq!(items.get(2), None);
        assert_eq!(items.get(1000), None);
        *items.get_mut(64).unwrap() = 640;
        assert_eq!(items.get(64), Some(&640));
        assert_eq!(items.remove(3), Some(3));
        assert_eq!(items.remove(3), None);
        assert!(!items.contains(3));
        assert_eq!(ids(&items), [1, 31, 32, 33, 640, 70]);
        assert_eq!(items.len(), 6);
        items.clear();
        assert!(items.is_empty());
        assert_eq!(ids(&items), Vec::<u64>::new());
    }

    #[test]
    fn ids_in_order_fill_runs_and_deletes_give_memory_back() {
        let mut items: Items<u64> = (1..=10 * RUN).map(|id| (id, id)).collect();
        assert_eq!(items.runs.len(), 11, "ids 1..=320 span runs 0 to 10");
        assert!(items.runs.values().all(|run| run.len() as u64 <= RUN));
        assert_eq!(items.runs[&5].len() as u64, RUN);
        // Emptying a run drops it; thinning one shrinks it.
        for id in 5 * RUN..6 * RUN {
            items.remove(id);
        }
        assert!(!items.runs.contains_key(&5));
        for id in 6 * RUN + 1..7 * RUN {
            items.remove(id);
        }
        assert!(items.runs[&6].capacity() <= 4);
        assert_eq!(items.len() as u64, 10 * RUN - RUN - (RUN - 1));
        assert_eq!(items.get(6 * RUN), Some(&(6 * RUN)));
    }
}
