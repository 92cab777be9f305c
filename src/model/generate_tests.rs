use super::*;

#[test]
fn splitmix64_matches_the_reference() {
    // The first outputs of splitmix64.c for seed 0.
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
}

#[test]
fn the_nth_number_is_the_one_drawn_nth() {
    for seed in [0, 7, u64::MAX] {
        let mut rng = SplitMix64::new(seed);
        for n in 1..=100 {
            assert_eq!(SplitMix64::nth(seed, n), rng.next_u64(), "{seed} {n}");
        }
    }
}

fn check(text: &str, expected: Result<Spec, &str>) {
    assert_eq!(parse_spec(text), expected, "{text:?}");
}

#[test]
fn specs() {
    let spec = |todos, widgets| Ok(Spec { todos, widgets });
    check("todos=200,widgets=50", spec(200, 50));
    check("widgets=50,todos=200", spec(200, 50));
    check("todos=3", spec(3, 0));
    check("widgets=0", spec(0, 0));
    check(" todos = 2 , widgets=1", spec(2, 1));
    check(
        "",
        Err("collection=count pairs, comma-separated, such as todos=200,widgets=50"),
    );
    check(
        "todos",
        Err("collection=count pairs, comma-separated, such as todos=200,widgets=50"),
    );
    check(
        "users=3",
        Err("the collections todos and widgets, such as todos=200,widgets=50"),
    );
    check(
        "todos=many",
        Err("a whole number of items after each '=', such as todos=200"),
    );
    check(
        "todos=-1",
        Err("a whole number of items after each '=', such as todos=200"),
    );
    check(
        "todos=",
        Err("a whole number of items after each '=', such as todos=200"),
    );
    check(
        "todos=100000001",
        Err("at most 100000000 items per collection"),
    );
    check(
        "todos=1,todos=2",
        Err("each collection once, such as todos=200,widgets=50"),
    );
}

#[test]
fn the_same_seed_gives_the_same_items() {
    assert_eq!(todos(7, 20).ok(), todos(7, 20).ok());
    assert_ne!(todos(7, 20).ok(), todos(8, 20).ok());
    assert_eq!(widgets(7, 20).ok(), widgets(7, 20).ok());
    assert_ne!(widgets(7, 20).ok(), widgets(8, 20).ok());
}

/// Pinned: the same seed must give the same items in every version (the
/// docs show these), so changing a word list or the arithmetic
/// fails here first.
#[test]
fn seed_7_gives_the_items_the_readme_shows() {
    let todos = todos(7, 3).ok();
    let expected = [
        (10, "Buy milk", false),
        (1, "Reply to Anna's email", false),
        (5, "Walk the dog", false),
    ]
    .map(|(user, title, done)| (user, title.to_string(), done));
    assert_eq!(todos.as_deref(), Some(&expected[..]));
    let widgets = widgets(7, 2).ok();
    let expected = [("$424", "poor"), ("$349", "like new")]
        .map(|(price, quality)| (price.to_string(), quality.to_string()));
    assert_eq!(widgets.as_deref(), Some(&expected[..]));
}

#[test]
fn generated_items_are_plausible() {
    let Ok(todos) = todos(0, 300) else {
        panic!("a generated todo was refused");
    };
    let completed = todos.iter().filter(|(_, _, done)| *done).count();
    assert!(
        (70..130).contains(&completed),
        "{completed} of 300 completed"
    );
    assert!(todos.iter().all(|(user, _, _)| (1..=USERS).contains(user)));
    let Ok(widgets) = widgets(0, 300) else {
        panic!("a generated widget was refused");
    };
    assert!(widgets.iter().all(|(price, _)| price.starts_with('$')));
}
