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
