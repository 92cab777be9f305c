//! The loader's messages name the real problem of an item, in a snapshot
//! as in a journal line, and whole numbers are read by one rule in the
//! data files as in a request body: `7.0` and `7e0` are the integer 7.

use std::fs;

use widgets_todos::store::Store;

use crate::support::{TempDir, TestServer};

/// Opens a store on `snapshot` (none when empty) and `journal` lines, and
/// serves it; or the loader's message.
fn open(name: &str, snapshot: &str, journal: &[&str]) -> Result<TestServer, String> {
    let dir = TempDir::new(name);
    let data = dir.join("data.json");
    if !snapshot.is_empty() {
        fs::write(&data, snapshot).expect("write the snapshot");
    }
    if !journal.is_empty() {
        let lines: String = journal.iter().map(|line| format!("{line}\n")).collect();
        fs::write(dir.join("data.json.journal"), lines).expect("write the journal");
    }
    let store = Store::open(100, &data);
    store.map(TestServer::with_store)
}

/// The loader's message for `snapshot` and `journal`, which must not load.
fn refused(snapshot: &str, journal: &[&str]) -> String {
    match open("refused", snapshot, journal) {
        Ok(_) => panic!("loaded: {snapshot} {journal:?}"),
        Err(message) => message,
    }
}

#[test]
fn an_item_that_is_an_object_is_never_called_not_one() {
    let nested = format!("{}{}", "[".repeat(130), "]".repeat(130));
    let items = [
        (
            r#"{"id": 1, "userId": 1, "title": "caf\ud800"}"#,
            "surrogate",
        ),
        (
            &*format!(r#"{{"id": 1, "userId": 1, "title": "a", "x": {nested}}}"#),
            "recursion limit",
        ),
    ];
    for (item, problem) in items {
        let snapshot = refused(&format!(r#"{{"todos": [{item}]}}"#), &[]);
        assert!(snapshot.contains("todos[0]: "), "{snapshot}");
        assert!(!snapshot.contains("must be an object"), "{snapshot}");
        assert!(snapshot.contains("not valid JSON"), "{snapshot}");
        let line = format!(r#"{{"seq": 1, "op": "put", "collection": "todos", "item": {item}}}"#);
        let journal = refused("", &[&line]);
        assert!(journal.contains("line 1: "), "{journal}");
        assert!(journal.contains("not valid JSON"), "{journal}");
        for message in [&snapshot, &journal] {
            let named = match problem {
                "surrogate" => message.contains("escape") || message.contains("surrogate"),
                _ => message.contains(problem),
            };
            assert!(named, "{message}");
        }
    }
    // An item that is no object is still told so.
    let message = refused(r#"{"todos": [[1]]}"#, &[]);
    assert!(message.contains("todos[0]: must be an object"), "{message}");
}

#[test]
fn whole_numbers_are_read_by_one_rule_everywhere() {
    let snapshot = r#"{"seq": 2.0, "lastId": {"todos": 9e0, "widgets": 40e-1},
        "todos": [{"id": 1.0, "userId": 1.0, "title": "a"}, {"id": 0.2e1, "userId": 7, "title": "b"}]}"#;
    let journal = [
        r#"{"seq": 2e0, "op": "delete", "collection": "todos", "id": 2.0}"#,
        r#"{"seq": 3.0, "op": "delete", "collection": "todos", "id": 2.0}"#,
        r#"{"seq": 4, "op": "put", "collection": "todos", "item": {"id": 3.0, "userId": 2e0, "title": "c"}}"#,
    ];
    let server = open("whole", snapshot, &journal).unwrap_or_else(|err| panic!("{err}"));
    let todos = server.get("/api/todos").json();
    let ids: Vec<u64> = todos
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 3], "{todos}");
    assert_eq!(todos[1]["userId"], 2);
    // lastId 9 and 4 hold: the next ids are 10 and 5.
    let todo = server.create("/api/todos", r#"{"userId": 1, "title": "d"}"#);
    assert_eq!(todo["id"], 10);
    let widget = server.create("/api/widgets", r#"{"price": "$1", "quality": "q"}"#);
    assert_eq!(widget["id"], 5);

    // A fraction is no whole number, wherever it is.
    for (snapshot, journal, said) in [
        (
            r#"{"todos": [{"id": 1.5, "userId": 1, "title": "a"}]}"#,
            "",
            "id must be a whole number",
        ),
        (r#"{"seq": 0.5}"#, "", r#""seq" must be a whole number"#),
        (
            r#"{"lastId": {"todos": 1.5}}"#,
            "",
            "lastId.todos must be a whole number",
        ),
        (
            "",
            r#"{"seq": 1.5, "op": "clear", "collection": "todos"}"#,
            r#""seq" must be a whole number"#,
        ),
        (
            "",
            r#"{"seq": 1, "op": "delete", "collection": "todos", "id": 1.5}"#,
            r#""id" must be a whole number"#,
        ),
    ] {
        let journal: Vec<&str> = [journal].into_iter().filter(|j| !j.is_empty()).collect();
        let message = refused(snapshot, &journal);
        assert!(message.contains(said), "{snapshot} {journal:?}: {message}");
    }
}

/// A journal that does not follow on from its snapshot (cut or replaced
/// by another program, or one of the two restored without the other):
/// start-up says what the missing records were and how to go on, rather
/// than only that they are missing.
#[test]
fn a_journal_with_records_missing_says_what_they_were() {
    let message = refused(
        r#"{"seq": 4, "todos": []}"#,
        &[r#"{"seq":7,"op":"delete","collection":"todos","id":1}"#],
    );
    assert!(message.contains("records 5 to 6 are missing"), "{message}");
    assert!(message.contains("acknowledged writes"), "{message}");
    assert!(message.contains("by another program"), "{message}");
    assert!(message.contains("from one back-up"), "{message}");
}
