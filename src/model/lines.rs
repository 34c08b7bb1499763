//! How a cart's current lines become the wanted ones, written once for every adapter whose
//! store edits lines in place (by line id or position) rather than replacing them whole.

/// What to send: a current line (by its position) that changes, and the wanted lines no
/// current line holds. A current line is matched to the first wanted line of its key; a second
/// current line of a key already kept is removed.
#[derive(Debug)]
pub struct LineDiff<'w, W> {
    /// In the current lines' order; `to: None` removes the line.
    pub changes: Vec<LineChange<'w, W>>,
    pub additions: Vec<&'w W>,
}

#[derive(Debug)]
pub struct LineChange<'w, W> {
    /// Position in the current lines.
    pub index: usize,
    pub to: Option<&'w W>,
}

/// `current` yields each line's key and quantity; `wanted_key` gives a wanted line's.
pub fn diff<'c, 'w, W>(
    current: impl IntoIterator<Item = (&'c str, i64)>,
    wanted: &'w [W],
    wanted_key: impl Fn(&W) -> (&str, u32),
) -> LineDiff<'w, W> {
    let mut kept: Vec<usize> = Vec::new();
    let mut changes = Vec::new();
    for (index, (key, quantity)) in current.into_iter().enumerate() {
        let target = wanted
            .iter()
            .enumerate()
            .find(|(at, want)| wanted_key(want).0 == key && !kept.contains(at));
        match target {
            Some((at, want)) => {
                kept.push(at);
                if i64::from(wanted_key(want).1) != quantity {
                    changes.push(LineChange {
                        index,
                        to: Some(want),
                    });
                }
            }
            None => changes.push(LineChange { index, to: None }),
        }
    }
    let additions = wanted
        .iter()
        .enumerate()
        .filter(|(at, _)| !kept.contains(at))
        .map(|(_, want)| want)
        .collect();
    LineDiff { changes, additions }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_removals_repeats_and_additions() {
        let wanted = [("a", 2), ("b", 1), ("c", 4)];
        let current = [("a", 1), ("b", 1), ("b", 3), ("x", 5)];
        let diff = diff(current, &wanted, |want| (want.0, want.1));
        let changes: Vec<_> = diff
            .changes
            .iter()
            .map(|change| (change.index, change.to.map(|to| to.1)))
            .collect();
        // a changes, the first b stays, the repeated b and x go.
        assert_eq!(changes, [(0, Some(2)), (2, None), (3, None)]);
        assert_eq!(diff.additions, [&("c", 4)]);
    }
}
