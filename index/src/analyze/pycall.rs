//! Reading the pandas calls stored as `load` lines: where their code is (outside string
//! literals), where a bare word stands, where a list ends. Written by hand: the calls are
//! ones lakestar writes itself, one line of Python each, and a Python parser crate would
//! be a large dependency for three scans.

/// For every byte of `call`, whether it is code (outside a `'…'` or `"…"` literal, quotes
/// themselves counting as inside).
pub(crate) fn code_mask(call: &str) -> Vec<bool> {
    let b = call.as_bytes();
    let mut mask = vec![true; b.len()];
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                mask[i] = false;
                if c == b'\\' && i + 1 < b.len() {
                    mask[i + 1] = false;
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == b'"' || c == b'\'' => {
                mask[i] = false;
                quote = Some(c);
            }
            None => {}
        }
        i += 1;
    }
    mask
}

/// Byte offsets where `word` stands as a whole identifier in the code of `call`.
pub(crate) fn word_at(call: &str, word: &str) -> Vec<usize> {
    let b = call.as_bytes();
    let mask = code_mask(call);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len())
        .filter(|&i| {
            mask[i]
                && b[i..].starts_with(word.as_bytes())
                && (i == 0 || !ident(b[i - 1]))
                && b.get(i + word.len()).is_none_or(|&n| !ident(n))
        })
        .collect()
}

/// Just past the `]` matching the `[` at `start`, brackets inside literals skipped.
pub(crate) fn list_end(call: &str, start: usize) -> Option<usize> {
    let mask = code_mask(call);
    let mut depth = 0usize;
    for (i, &c) in call.as_bytes().iter().enumerate().skip(start) {
        if !mask[i] {
            continue;
        }
        match c {
            b'[' => depth += 1,
            b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_words_and_lists() {
        let call = r#"f(path, x="path\"]", names=['a]', "b"], paths=1)"#;
        assert_eq!(word_at(call, "path"), [2]);
        let at = call.find("['a").unwrap();
        assert_eq!(&call[at..list_end(call, at).unwrap()], r#"['a]', "b"]"#);
        assert_eq!(list_end("[1, [2]", 0), None);
    }
}
