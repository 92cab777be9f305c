//! Taking back changes whose journal write failed, with a journal that is
//! a link to /dev/full (every write fails with ENOSPC).

use super::*;
use crate::model::Input;

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

fn new_todo() -> <Todo as Resource>::New {
    let fields = vec![
        ("userId".to_string(), Input::Json(1.into())),
        ("title".to_string(), Input::Json("a".into())),
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
    assert!(store.all::<Todo>().is_empty());
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
    let before = (store.all::<Todo>(), store.all::<Widget>());
    let storage = store.shared.storage.as_ref().unwrap();
    // A subscriber: every write takes a ticket for its event.
    let mut subscription = store.feed().subscribe(None, 1, None).unwrap();

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
        assert_eq!(store.all::<Todo>().len(), 3, "two created, one deleted");
        assert!(store.all::<Widget>().is_empty());
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
    assert_eq!((store.all::<Todo>(), store.all::<Widget>()), before);
    assert_eq!(last_ids_and_undo(&store), (1, 2, 0));
    // No event for a write taken back, and no ticket left undecided (a
    // later event would wait behind it forever).
    let mut events = Vec::new();
    let now = std::time::Instant::now();
    let next = subscription.wait(&mut events, (10, usize::MAX), now, now);
    assert_eq!((next, events.len()), (feed::Next::Quiet, 0));
    assert_eq!(store.feed().undecided(), 0);
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
fn create_all_takes_the_next_ids_and_stops_at_the_limit() {
    let store = Store::new(3);
    assert!(
        store
            .create_all::<Todo>(vec![new_todo(), new_todo()])
            .is_ok()
    );
    let ids: Vec<u64> = store.all::<Todo>().iter().map(|todo| todo.id).collect();
    assert_eq!(ids, [1, 2]);
    let full = store.create_all::<Todo>(vec![new_todo(), new_todo()]);
    assert!(matches!(full, Err(ApiError::InsufficientStorage { .. })));
}
