//! Reading a collection as a list (`GET /api/todos?...`), and what is kept
//! between writes to make the next read cheap: the whole list's JSON, up
//! to a bound, and the orders of sorted reads.
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
//!
//! **Patterns.** A `_like` regular expression costs far more per item
//! than a comparison, enough to keep writes waiting for seconds over a
//! large collection. A read with one copies, under the lock, the items
//! that pass its other filters, and runs the pattern, the order and the
//! slice on the copy after releasing it: the read still sees one state
//! of the collection, and the writes wait only for the copy.

use super::items::Items;
use super::{Listed, Store, Stored, lock, render};
use crate::error::ApiError;
use crate::model::Resource;
use crate::model::query::{ListQuery, Plan};

/// The largest whole list kept between writes, in bytes: 16 MiB, which
/// holds the default `--max-items` (100,000) of short todos.
pub const LIST_KEPT_MAX: usize = 16 << 20;

/// How many sort orders a collection keeps between writes.
pub const ORDERS_MAX: usize = 4;

/// The orders kept of sorted reads, oldest first.
#[derive(Debug, Default)]
pub struct Orders(pub(super) Vec<Order>);

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
    fn of<T: Resource>(
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

impl Store {
    /// The items `query` selects, as a JSON array, and how many matched
    /// before slicing; see the module comment for what is kept between
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
    /// [`LIST_KEPT_MAX`] (tests use a small bound).
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

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;
