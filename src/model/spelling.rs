//! "Did you mean": the known name closest to a misspelt one, for the
//! messages about unknown body fields (`"userid"`, `"titel"`) and unknown
//! query parameters (`?_sortt=id`). A typo stays an error (the request is
//! refused, nothing is guessed); the message only says what was probably
//! meant.
//!
//! Two names are close when they differ only in case, or when one becomes
//! the other in at most two edits: a character inserted, removed, replaced,
//! or two neighbours swapped (the optimal string alignment distance, a
//! restricted Damerau-Levenshtein distance). Case is ignored throughout.

/// The name in `known` closest to `name`, if one is close enough (see the
/// module comment). A name at least as long as its distance is no match:
/// `x` is one edit from `q`, and also from everything else of one letter.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let name: Vec<char> = name.to_lowercase().chars().collect();
    let mut best: Option<(usize, &'a str)> = None;
    for &candidate in known {
        let other: Vec<char> = candidate.to_lowercase().chars().collect();
        let d = distance(&name, &other);
        let close = d <= 2 && d < name.len();
        if close && best.is_none_or(|(shortest, _)| d < shortest) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// The optimal string alignment distance between `a` and `b`: the fewest
/// insertions, deletions, replacements and swaps of neighbours that turn
/// one into the other, with no character edited twice. The classic table:
/// `row[i][j]` is the distance between the first `i` characters of `a`
/// and the first `j` of `b`.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, cells) in row.iter_mut().enumerate() {
        cells[0] = i;
    }
    row[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let replace = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (row[i - 1][j] + 1)
                .min(row[i][j - 1] + 1)
                .min(row[i - 1][j - 1] + replace);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(row[i - 2][j - 2] + 1);
            }
            row[i][j] = best;
        }
    }
    row[a.len()][b.len()]
}

#[cfg(test)]
#[path = "spelling_tests.rs"]
mod tests;
