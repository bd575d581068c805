//! Whether a field list fits a data file by content: its positions cover the data's
//! lines (no line runs past the last field, most reach into it), the blanks between
//! fields are blank, fields its format codes call numbers read as numbers, and no field
//! without a code cuts across two numbers.

use super::Listing;
use crate::analyze::fixed::chars_slice;

/// Lines of a data file checked.
pub const FIT_LINES: usize = 400;
/// Bytes of a data file read to check a fit.
pub const FIT_BYTES: u64 = 64 * 1024;
/// Share of lines that may break a test (a stray note line, a wider last line).
const SLACK: f64 = 0.03;

/// A number as Fortran writes one (`1.5D+03` too).
fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok() || s.replace(['D', 'd'], "E").parse::<f64>().is_ok()
}

/// The data lines of `text`: not blank, not a `#` comment, at most [`FIT_LINES`].
pub fn data_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.trim_end_matches(['\r', ' ', '\t']))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(FIT_LINES)
        .collect()
}

/// Whether the positions of `listing` fit the data `lines`.
pub fn fits(listing: &Listing, lines: &[&str]) -> bool {
    let Some(spans) = &listing.spans else {
        return false;
    };
    if spans.len() < 2 || lines.len() < 2 || spans.len() != listing.columns.len() {
        return false;
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| spans[i]);
    let total = spans[order[order.len() - 1]].1;
    let last_start = spans[order[order.len() - 1]].0;
    let allowed = (lines.len() as f64 * SLACK).floor() as usize;
    let (mut too_long, mut reach) = (0, 0);
    let mut bad = vec![0usize; spans.len()];
    let mut numbers_seen = 0;
    let mut gap_bad = 0;
    for line in lines {
        let len = line.chars().count();
        if len > total {
            too_long += 1;
            continue;
        }
        if len > last_start {
            reach += 1;
        }
        for w in order.windows(2) {
            let (end, next) = (spans[w[0]].1, spans[w[1]].0);
            if next > end && !chars_slice(line, end, next).trim().is_empty() {
                gap_bad += 1;
                break;
            }
        }
        for (i, &(a, b)) in spans.iter().enumerate() {
            let cell = chars_slice(line, a, b).trim();
            if cell.is_empty() {
                continue;
            }
            match listing.numeric.get(i).copied().flatten() {
                Some(true) if !is_number(cell) => bad[i] += 1,
                Some(true) => numbers_seen += 1,
                // Without a code, a field that cuts across two numbers is misplaced.
                None if cell.split_whitespace().count() > 1
                    && cell.split_whitespace().all(is_number) =>
                {
                    bad[i] += 1
                }
                _ => {}
            }
        }
    }
    let coded = listing.numeric.contains(&Some(true));
    too_long <= allowed
        && gap_bad <= allowed
        && reach * 2 >= lines.len()
        && bad.iter().all(|&b| b <= allowed)
        && (!coded || numbers_seen > 0)
}

/// Whether the format codes of `listing` agree with the data `lines` read as
/// blank-separated fields: on the lines with one token per listed column, a column its
/// code calls a number reads as one. Lines of another token count say nothing (cells
/// with blanks in them), and so does a listing without codes.
pub fn tokens_agree(listing: &Listing, lines: &[&str]) -> bool {
    let n = listing.columns.len();
    let mut bad = 0;
    for line in lines {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.len() != n {
            continue;
        }
        let wrong = toks
            .iter()
            .zip(&listing.numeric)
            .any(|(t, num)| *num == Some(true) && !is_number(t));
        bad += usize::from(wrong);
    }
    bad <= (lines.len() as f64 * SLACK).floor() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::companion::DocColumn;

    fn listing(spans: &[(usize, usize)], numeric: &[Option<bool>]) -> Listing {
        Listing {
            columns: (0..spans.len())
                .map(|i| DocColumn {
                    name: format!("c{i}"),
                    unit: None,
                    description: None,
                })
                .collect(),
            spans: Some(spans.to_vec()),
            numeric: numeric.to_vec(),
            count_ok: false,
        }
    }

    const JAMMED: &str =
        "19900101  21.3  31.8 ST71\n19901104  20.7  19.4 ST24\n19901231   9.3   7.2 ST28\n";

    #[test]
    fn positions_that_cover_the_lines_fit() {
        let y = Some(true);
        let l = listing(
            &[(0, 4), (4, 6), (6, 8), (8, 14), (14, 20), (20, 25)],
            &[y, y, y, y, y, Some(false)],
        );
        assert!(fits(&l, &data_lines(JAMMED)));
        // Without codes, the same positions fit.
        let l = listing(
            &[(0, 4), (4, 6), (6, 8), (8, 14), (14, 20), (20, 25)],
            &[None; 6],
        );
        assert!(fits(&l, &data_lines(JAMMED)));
    }

    #[test]
    fn positions_that_do_not_cover_the_lines_do_not_fit() {
        let y = Some(true);
        // Too narrow: the lines run past the last field.
        let l = listing(&[(0, 4), (4, 6), (6, 8)], &[y, y, y]);
        assert!(!fits(&l, &data_lines(JAMMED)));
        // Too wide: no line reaches the last field.
        let l = listing(&[(0, 8), (8, 14), (14, 20), (20, 25), (25, 40)], &[y; 5]);
        assert!(!fits(&l, &data_lines(JAMMED)));
        // A number field over text.
        let l = listing(&[(0, 8), (8, 14), (14, 20), (20, 25)], &[y, y, y, y]);
        assert!(!fits(&l, &data_lines(JAMMED)));
        // A field without a code across two numbers.
        let l = listing(&[(0, 8), (8, 20), (20, 25)], &[None; 3]);
        assert!(!fits(&l, &data_lines(JAMMED)));
        // A blank between fields that holds digits.
        let l = listing(&[(0, 4), (5, 8), (8, 14), (14, 20), (20, 25)], &[None; 5]);
        assert!(!fits(&l, &data_lines(JAMMED)));
    }

    #[test]
    fn codes_agree_with_blank_separated_fields() {
        let y = Some(true);
        let lines = data_lines(JAMMED);
        assert!(tokens_agree(
            &listing(
                &[(0, 8), (8, 14), (14, 20), (20, 25)],
                &[y, y, y, Some(false)]
            ),
            &lines
        ));
        assert!(!tokens_agree(
            &listing(&[(0, 8), (8, 14), (14, 20), (20, 25)], &[y, y, y, y]),
            &lines
        ));
        // Another token count: nothing to judge.
        assert!(tokens_agree(
            &listing(&[(0, 8), (8, 14), (14, 20)], &[y, y, y]),
            &lines
        ));
    }
}
