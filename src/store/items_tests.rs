//! Items as an ordered map; and what a collection keeps between writes
//! gives what a read without it gives, for every sort and slice; every
//! kind of write drops it; and it stays within its bounds.

use super::*;
use crate::error::lock;
use crate::model::Todo;
use crate::model::query::parse;
use crate::store::{Store, render};

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
    assert!(items.get(3).is_none());
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

/// Every sort a todo takes, each field both ways and a few together, with
/// the slices a client sends.
const QUERIES: &[&str] = &[
    "_sort=id",
    "_sort=id&_order=desc",
    "_sort=userId&_limit=5",
    "_sort=userId&_order=desc&_page=2&_limit=4",
    "_sort=title",
    "_sort=title&_order=DESC&_start=3&_end=9",
    "_sort=completed&_limit=7",
    "_sort=completed&_order=desc&_start=100",
    "_sort=userId,title&_order=desc,asc&_page=3&_limit=3",
    "_sort=completed,userId,title&_order=asc,desc",
    "",
    "_page=2&_limit=5",
    // A pattern runs on a copy, after the lock (see the module comment).
    "title_like=^[ab]&_sort=title&_limit=5",
    "title_like=%C3%89|c&userId=2",
];

/// 24 todos with many ties: three users, six titles (two differ only in
/// case, one is not ASCII), every fourth completed.
fn store() -> Store {
    let store = Store::new(100);
    let titles = ["b", "a", "B", "a", "é", "c"];
    let news = (0..24)
        .map(|n| (n as u64 % 3 + 1, titles[n % 6].to_string(), n % 4 == 0))
        .collect();
    store.create_all::<Todo>(news).unwrap();
    store
}

fn query(text: &str) -> ListQuery {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(text.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    parse::<Todo>(&pairs).unwrap()
}

/// Each query's answer from the store, made and then kept, is the answer
/// of the query run over a copy of every item.
fn check(store: &Store) {
    let all = store.all::<Todo>();
    for text in QUERIES {
        let query = query(text);
        let (page, total) = query.run(all.iter(), all.len());
        let expected = render(&page).unwrap();
        for read in ["first", "second"] {
            let listed = store.list::<Todo>(&query).unwrap();
            assert_eq!(listed.total, total, "{read} read of ?{text}");
            let body = String::from_utf8_lossy(&listed.rendered.body);
            assert_eq!(
                body,
                String::from_utf8_lossy(&expected.body),
                "{read} read of ?{text}"
            );
        }
    }
}

fn orders_kept(store: &Store) -> usize {
    lock(&store.shared.todos).orders.0.len()
}

fn listed_ids(store: &Store, text: &str) -> Vec<u64> {
    let body = store.list::<Todo>(&query(text)).unwrap().rendered.body;
    let items: Vec<serde_json::Value> = serde_json::from_slice(&body).unwrap();
    items
        .iter()
        .map(|item| item["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_kept_order_breaks_ties_by_id_ascending_either_way() {
    let store = store();
    // Titles "a" are todos 2, 4, 8, 10, ...; "B" 3, 9, ...; "b" 1, 7, ...
    // The second read of each takes the order the first kept.
    for _ in 0..2 {
        let ascending = listed_ids(&store, "_sort=title&_limit=5");
        assert_eq!(ascending, [3, 9, 15, 21, 2]);
    }
    for _ in 0..2 {
        let descending = listed_ids(&store, "_sort=title&_order=desc&_limit=5");
        assert_eq!(descending, [5, 11, 17, 23, 6]);
    }
    assert_eq!(orders_kept(&store), 2);
}

#[test]
fn kept_orders_and_list_answer_as_a_fresh_read_does() {
    let store = store();
    check(&store);
    assert!(store.keeps_list::<Todo>());
    assert_eq!(
        orders_kept(&store),
        ORDERS_MAX,
        "at most {ORDERS_MAX} orders"
    );
}

/// A write to the store, as a request makes it.
type Write = fn(&Store);

#[test]
fn every_kind_of_write_drops_what_was_kept() {
    let store = store();
    let kept = |store: &Store| (store.keeps_list::<Todo>(), orders_kept(store));
    let writes: [(&str, Write); 5] = [
        ("create", |s: &Store| {
            assert_eq!(s.create::<Todo>((2, "a".into(), false)).unwrap().0.id, 25);
        }),
        ("replace", |s: &Store| {
            let changed = s.update::<Todo>(
                3,
                |_| Ok(()),
                |t| {
                    t.user_id = 3;
                    t.title = "z".to_string().into();
                    t.completed = true;
                },
            );
            assert!(changed.unwrap().is_some());
        }),
        ("patch", |s: &Store| {
            let changed = s.update::<Todo>(9, |_| Ok(()), |t| t.title = "A".to_string().into());
            assert!(changed.unwrap().is_some());
        }),
        ("delete", |s: &Store| {
            assert!(s.delete::<Todo>(2, |_| Ok(())).unwrap().is_some())
        }),
        ("reset", |s: &Store| s.clear::<Todo>().unwrap()),
    ];
    for (name, write) in writes {
        check(&store);
        assert_eq!(kept(&store), (true, ORDERS_MAX), "before the {name}");
        write(&store);
        assert_eq!(kept(&store), (false, 0), "after the {name}");
        check(&store);
    }
    assert!(store.all::<Todo>().is_empty());
}

#[test]
fn a_list_over_the_bound_is_not_kept_but_whole() {
    let store = store().keeping_lists_up_to(100);
    check(&store);
    assert!(!store.keeps_list::<Todo>());
    let whole = store.list::<Todo>(&query("")).unwrap();
    assert_eq!(whole.total, 24);
    assert!(whole.rendered.body.len() > 100);
    // The bound counts bytes: a list at most that long is kept.
    let store = store.keeping_lists_up_to(whole.rendered.body.len());
    check(&store);
    assert!(store.keeps_list::<Todo>());
}
