use super::*;

/// The server's own replacement, as a compaction makes it.
fn replace(edits: &Edits, path: &Path, text: &str) {
    let replacing = edits.before_replacing(false).unwrap();
    let written = super::super::files::write_atomically(path, |out| {
        std::io::Write::write_all(out, text.as_bytes())
    })
    .unwrap();
    edits.replaced(replacing, &written);
}

#[test]
fn a_change_is_told_once_and_the_server_own_writes_never() {
    let dir = std::env::temp_dir().join(format!("widgets-todos-edits-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.json");
    fs::write(&path, "{}").unwrap();
    let edits = Edits::new(&path);
    assert_eq!(edits.look(), None, "nothing changed");
    replace(&edits, &path, "{\"todos\": []}");
    assert_eq!(edits.look(), None, "the server's own write is no edit");

    // Another program's edit: told once, with its text.
    fs::write(&path, "{\"widgets\": []}").unwrap();
    let edit = Some(Edit::Changed(b"{\"widgets\": []}".to_vec()));
    assert_eq!(edits.look(), edit);
    assert_eq!(edits.look(), None, "the same edit is told once");

    // A change after the look: kept, the replacement stops.
    fs::write(&path, "{}").unwrap();
    assert!(edits.before_replacing(true).is_err());
    replace(&edits, &path, "{\"todos\": []}");

    // An edit written to the file while the server replaces it.
    let replacing = edits.before_replacing(true).unwrap();
    fs::write(&path, "{\"todos\": [1]}").unwrap();
    let written =
        super::super::files::write_atomically(&path, |out| std::io::Write::write_all(out, b"{}"))
            .unwrap();
    edits.replaced(replacing, &written);
    assert_eq!(
        edits.look(),
        Some(Edit::Changed(b"{\"todos\": [1]}".to_vec()))
    );
    assert_eq!(edits.look(), None);

    // A deletion is a change too (no file then, and none before, is none).
    fs::remove_file(&path).unwrap();
    assert_eq!(edits.look(), Some(Edit::Deleted));
    assert_eq!(edits.look(), None);
    fs::remove_dir_all(&dir).unwrap();
}
