//! A collection: its items, by id, packed densely; and what it keeps of
//! them between writes to make the next read cheap: the whole list's JSON,
//! up to a bound, the orders of sorted reads, and items' JSON. `store.rs`
//! locks a collection and reads or changes it; this file is what is under
//! the lock.
//!
//! **Items.** A `BTreeMap<u64, T>` would do, but ids are handed out in
//! order, and a B-tree filled in order splits each full leaf in two and
//! never fills either half again: its leaves stay about half empty. For a
//! collection that only grows that is twice the memory per item.
//! [`Items`] keeps items in runs of [`RUN`] consecutive ids instead: a
//! B-tree of small sorted vectors, one per run. Ids handed out in order
//! fill each run completely; a lookup is one tree search and a binary
//! search of at most `RUN` ids; removing an item shifts at most `RUN - 1`
//! others. A run that empties is dropped, and one that has become mostly
//! empty gives memory back, so memory stays proportional to the items
//! kept, whatever was deleted. What that saves, measured with
//! `scripts/loadmem.py`: scripts/PERFORMANCE.md, "Memory".
//!
//! **The whole list.** The first plain read after a change (every item,
//! ascending id) serializes the list under the lock and keeps it, with its
//! entity tag, for the reads until the next change (what that saves:
//! scripts/PERFORMANCE.md). But a list of a million todos is tens of
//! megabytes, and keeping that to save a serialization is the wrong trade
//! on a small machine. A list of more than [`LIST_KEPT_MAX`] bytes is not kept: every
//! read serializes it again, and its bytes live only as long as that
//! response.
//!
//! **Sorted reads.** A read that sorts (`?_sort=title&_limit=10`) needs
//! every item in order, though it sends ten: sorting a million todos took
//! every read far longer than the rest of it. When it has no filter and no `q`, its
//! order depends on the items alone, so the first such read after a change
//! keeps it (the ids of every item, in that order), and the reads until
//! the next change slice it and look up only the items they send. At most [`ORDERS_MAX`]
//! orders are kept, 8 bytes per item each; a
//! new one pushes out the oldest. Every change drops them all, as it drops
//! the kept list: under writes, a sorted read sorts, as it always did. A
//! filtered read (`?userId=3&_sort=title`) still reads every item and
//! sorts the matches: its order depends on the filter too.

use std::collections::BTreeMap;

use super::journal::Appended;
use super::load::Loaded;
use super::{Listed, Rendered};
use crate::model::Resource;
use crate::model::query::ListQuery;

/// The items of one resource, keyed by id so listing is in ascending id,
/// and what is kept of them between writes.
pub struct Collection<T> {
    pub(super) items: Items<T>,
    pub(super) last_id: u64,
    /// The whole collection as a JSON array, made by the first list read
    /// after a change and dropped by the next change, so that reads between
    /// writes share one serialization; only up to `list_kept_max` bytes.
    pub(super) listed: Option<Listed>,
    pub(super) list_kept_max: usize,
    /// The orders of sorted reads, kept likewise.
    pub(super) orders: Orders,
    /// Items' JSON likewise, each made by the first read after its last
    /// change; at most [`super::RENDERED_MAX`] (past that, it starts afresh).
    pub(super) rendered: BTreeMap<u64, Rendered>,
    /// With `--data`: how to take back each change whose journal record is
    /// not yet durable, with that record's `seq`, oldest first.
    pub(super) undo: Vec<(u64, Undo<T>)>,
}

/// How to take back one change made in memory (see `store.rs`, "When
/// the journal cannot be written").
pub(super) enum Undo<T> {
    /// A create: remove the item, and give its id back.
    Create(u64),
    /// An update or a delete: put the item back as it was.
    Restore(T),
    /// A clear: put every item back.
    Clear(Items<T>),
}

impl<T: Resource> Collection<T> {
    /// Remembers how to take back the change whose record was just
    /// appended, and forgets those of changes now durable (with `--data`).
    pub(super) fn remember(&mut self, appended: Appended, undo: Undo<T>) {
        self.forget_up_to(appended.durable);
        self.undo.push((appended.seq, undo));
    }

    /// Forgets the undo records of changes up to `seq`: they are durable.
    pub(super) fn forget_up_to(&mut self, seq: u64) {
        let durable = self.undo.partition_point(|(recorded, _)| *recorded <= seq);
        self.undo.drain(..durable);
    }

    /// Takes back every change recorded after `durable`, newest first.
    pub(super) fn take_back_after(&mut self, durable: u64) {
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
            self.changed(None);
        }
    }

    /// The items loaded from an edit of the data file (`--watch`), in
    /// place of these. Ids are never reused: `last_id` keeps the higher.
    /// Call it once every change is durable: there is nothing to undo.
    pub(super) fn replace(&mut self, loaded: Loaded<T>) {
        self.items = loaded.items;
        self.last_id = self.last_id.max(loaded.last_id);
        self.undo.clear();
        self.changed(None);
    }

    /// A change: the JSON kept of the item (or of all, `None`) and of the
    /// list, and the sorted orders, are dropped.
    pub(super) fn changed(&mut self, id: Option<u64>) {
        self.listed = None;
        self.orders.0.clear();
        match id {
            Some(id) => drop(self.rendered.remove(&id)),
            None => self.rendered.clear(),
        }
    }
}

impl<T> From<Loaded<T>> for Collection<T> {
    fn from(loaded: Loaded<T>) -> Collection<T> {
        Collection {
            items: loaded.items,
            last_id: loaded.last_id,
            listed: None,
            list_kept_max: LIST_KEPT_MAX,
            orders: Orders::default(),
            rendered: BTreeMap::new(),
            undo: Vec::new(),
        }
    }
}

/// The largest whole list kept between writes, in bytes: 16 MiB, which
/// holds the default `--max-items` (100,000) of short todos.
pub const LIST_KEPT_MAX: usize = 16 << 20;

/// How many sort orders a collection keeps between writes.
pub const ORDERS_MAX: usize = 4;

/// The orders kept of sorted reads, oldest first.
#[derive(Debug, Default)]
pub struct Orders(Vec<Order>);

/// A sort (field indexes, and whether each is descending), and every id
/// in its order.
#[derive(Debug)]
pub(super) struct Order {
    sort: Vec<(usize, bool)>,
    ids: Vec<u64>,
}

impl Orders {
    /// Every id in the order `sort` of `query` (a query with no filter),
    /// kept if it was, else made from `items` and kept.
    pub(super) fn of<T: Resource>(
        &mut self,
        sort: &[(usize, bool)],
        query: &ListQuery,
        items: &Items<T>,
    ) -> &[u64] {
        let at = match self.0.iter().position(|kept| kept.sort == sort) {
            Some(at) => at,
            None => {
                let mut sorted: Vec<&T> = items.values().collect();
                query.sort(&mut sorted);
                if self.0.len() == ORDERS_MAX {
                    self.0.remove(0);
                }
                let ids = sorted.iter().map(|item| item.id()).collect();
                let sort = sort.to_vec();
                self.0.push(Order { sort, ids });
                self.0.len() - 1
            }
        };
        &self.0[at].ids
    }
}

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
        let at = run.binary_search_by_key(&id, id_of).ok()?;
        Some(&run[at].1)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let run = self.runs.get_mut(&(id / RUN))?;
        let at = run.binary_search_by_key(&id, id_of).ok()?;
        Some(&mut run[at].1)
    }

    /// Adds the item, or replaces the one with the same id and returns it.
    pub fn insert(&mut self, id: u64, item: T) -> Option<T> {
        let run = self.runs.entry(id / RUN).or_default();
        match run.binary_search_by_key(&id, id_of) {
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
        let at = run.binary_search_by_key(&id, id_of).ok()?;
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

/// The key a run is sorted by: the item's id.
fn id_of<T>(entry: &(u64, T)) -> u64 {
    entry.0
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
