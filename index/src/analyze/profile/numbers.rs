//! Numbers as people write them: thousands separators (`1,234,567`, `1.234.567,89`,
//! `1 234`), decimal commas, percentages, currency symbols and codes, scale suffixes
//! (`$3,100M`), parenthesised negatives (`(1,234)`) and censored values (`<10`).
//!
//! A cell is read on its own ([`parse`]); a column is numeric only when all its cells
//! agree on one convention, which [`Column`] accumulates and [`Column::resolve`] decides.
//! Written by hand: no crate reads these conventions *and* says which one it used, and the
//! convention is part of the column's description.

mod convention;

pub(crate) use convention::{Column, Moments};

/// Longest cell (in bytes) read as a written number.
const MAX_LEN: usize = 48;
/// Most digits in a written number.
const MAX_DIGITS: usize = 32;
/// Most separators in a written number (groups of three up to 10^24).
const MAX_SEPS: usize = 8;

/// Currency symbols, longest first so that `US$` is not read as `$`.
const SYMBOLS: [&str; 16] = [
    "US$", "NZ$", "HK$", "A$", "C$", "R$", "$", "€", "£", "¥", "₹", "₩", "₽", "₺", "₪", "₱",
];
/// ISO 4217 codes written before or after amounts.
const CODES: [&str; 26] = [
    "USD", "EUR", "GBP", "JPY", "CNY", "CHF", "CAD", "AUD", "NZD", "INR", "BRL", "MXN", "KRW",
    "RUB", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "ZAR", "TRY", "HKD", "SGD", "ILS", "AED",
];
/// Scale suffixes: as written, the canonical letter recorded, the multiplier.
const SCALES: [(&str, &str, f64); 7] = [
    ("bn", "B", 1e9),
    ("mn", "M", 1e6),
    ("k", "k", 1e3),
    ("K", "k", 1e3),
    ("M", "M", 1e6),
    ("B", "B", 1e9),
    ("T", "T", 1e12),
];
/// The canonical scales, in the bit order of [`Column`]'s scale set (bit 0: none).
const SCALE_NAMES: [(&str, f64); 5] = [("", 1.0), ("k", 1e3), ("M", 1e6), ("B", 1e9), ("T", 1e12)];

// Separator characters, as bits.
const COMMA: u8 = 1;
const DOT: u8 = 2;
const SPACE: u8 = 4;
const NBSP: u8 = 8;
const NNBSP: u8 = 16;
const THIN: u8 = 32;
const APOS: u8 = 64;
const SPACES: u8 = SPACE | NBSP | NNBSP | THIN | APOS;

fn sep_text(code: u8) -> &'static str {
    match code {
        COMMA => ",",
        DOT => ".",
        SPACE => " ",
        NBSP => "\u{a0}",
        NNBSP => "\u{202f}",
        THIN => "\u{2009}",
        _ => "'",
    }
}

/// One cell read as a written number.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Written {
    /// The number in the written unit (scale not applied), sign applied; a lone `1,234`
    /// read with the comma grouping, a lone `1.234` with the dot as decimal point.
    pub value: f64,
    /// The other reading of an ambiguous cell (`1.234` for `1,234`); else `value`.
    pub alt: f64,
    /// [`COMMA`] or [`DOT`] when the cell is `d,ddd` / `d.ddd`, else 0.
    ambiguous: u8,
    /// The grouping character, when the cell shows one unambiguously.
    group: u8,
    /// The decimal mark, when the cell shows one unambiguously.
    decimal: u8,
    /// `value` has a written fraction.
    fraction: bool,
    percent: bool,
    currency: Option<&'static str>,
    /// Index into [`SCALE_NAMES`].
    scale: u8,
    paren: bool,
    /// `<`, `>` or 0.
    censored: u8,
}

impl Written {
    /// Whether the cell is written like a number at all, but plainly: no separator and
    /// no sign of notation (such cells are left to the plain parser).
    fn is_plain(&self) -> bool {
        self.ambiguous == 0
            && self.group == 0
            && self.decimal != COMMA
            && !self.percent
            && self.currency.is_none()
            && self.scale == 0
            && !self.paren
            && self.censored == 0
    }

    /// Written with separators and nothing else (`1 234`, `1.234,5`, `1,234`): no sign
    /// of a currency, percent, scale, bracket or bound.
    pub(crate) fn separated_only(&self) -> bool {
        (self.ambiguous != 0 || self.group != 0 || self.decimal == COMMA)
            && !self.percent
            && self.currency.is_none()
            && self.scale == 0
            && !self.paren
            && self.censored == 0
    }

    /// Integral in the written unit (under the default reading).
    pub(crate) fn is_integral(&self) -> bool {
        !self.fraction
    }
}

/// `d.ddd` (one to three digits, not starting with 0, a dot, three digits, maybe a
/// sign): a plain float that may be a dot-grouped integer. Checked by the plain path
/// before it takes such a cell for a float; cheap on purpose.
#[inline]
pub(crate) fn ambiguous_dot(v: &str) -> bool {
    let b = v.as_bytes();
    let b = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    let n = b.len();
    (5..=7).contains(&n)
        && b[n - 4] == b'.'
        && b[0] != b'0'
        && b[..n - 4].iter().all(u8::is_ascii_digit)
        && b[n - 3..].iter().all(u8::is_ascii_digit)
}

fn trim_space_start(s: &str) -> &str {
    s.trim_start_matches([' ', '\u{a0}', '\u{202f}'])
}

fn trim_space_end(s: &str) -> &str {
    s.trim_end_matches([' ', '\u{a0}', '\u{202f}'])
}

fn currency_prefix(s: &str) -> Option<(&'static str, &str)> {
    if let Some(sym) = SYMBOLS.iter().find(|p| s.starts_with(**p)) {
        return Some((sym, &s[sym.len()..]));
    }
    let code = CODES.iter().find(|c| s.starts_with(**c))?;
    let rest = &s[3..];
    // A code is a word of its own: `USD 1,200`, `USD1200`, not `USDA`.
    rest.as_bytes()
        .first()
        .is_some_and(|b| !b.is_ascii_alphabetic())
        .then_some((code, rest))
}

fn currency_suffix(s: &str) -> Option<(&'static str, &str)> {
    if let Some(sym) = SYMBOLS.iter().find(|p| s.ends_with(**p)) {
        return Some((sym, &s[..s.len() - sym.len()]));
    }
    let code = CODES.iter().find(|c| s.ends_with(**c))?;
    let rest = &s[..s.len() - 3];
    rest.as_bytes()
        .last()
        .is_some_and(|b| !b.is_ascii_alphabetic())
        .then_some((code, rest))
}

/// Read a trimmed cell as a written number; None when it is not one. Plain numbers
/// (`12`, `-3.5`) are read too, but the profile reads those on its faster path first.
pub(crate) fn parse(v: &str) -> Option<Written> {
    let first = *v.as_bytes().first()?;
    // What a written number can start with: a digit, a sign, `(`, `<`/`>`, a currency
    // symbol (ASCII `$`, a multi-byte one, `US$`…) or a currency code. Most cells that
    // are not numbers stop here.
    let may_start = match first {
        b'0'..=b'9' | b'-' | b'+' | b'(' | b'<' | b'>' | b'$' | 0x80.. => true,
        b'A'..=b'Z' => {
            // Words are ruled out before the lists are searched: a symbol (`US$`, `R$`)
            // has its `$` within three bytes, a code (`USD 5`) three capitals and no
            // letter after them.
            let b = v.as_bytes();
            (b.get(1..3).is_some_and(|s| s.contains(&b'$'))
                && SYMBOLS.iter().any(|p| v.starts_with(p)))
                || (b.len() > 3
                    && b[1].is_ascii_uppercase()
                    && b[2].is_ascii_uppercase()
                    && !b[3].is_ascii_alphabetic()
                    && CODES.contains(&&v[..3]))
        }
        _ => false,
    };
    if v.len() > MAX_LEN || !may_start {
        return None;
    }
    let mut w = Written::default();
    let mut s = v;
    let (mut signed, mut negative) = (false, false);
    if !first.is_ascii_digit() {
        prefixes(&mut s, &mut w, &mut signed, &mut negative)?;
    }
    // Suffixes: only when the cell does not end in a digit (or has its `)` to close).
    if w.paren || !s.as_bytes().last()?.is_ascii_digit() {
        suffixes(&mut s, &mut w)?;
    }
    core(s.as_bytes(), &mut w)?;
    if negative || w.paren {
        w.value = -w.value;
        w.alt = -w.alt;
    }
    Some(w)
}

/// Censoring, `(`, sign and a currency before the digits.
fn prefixes(s: &mut &str, w: &mut Written, signed: &mut bool, negative: &mut bool) -> Option<()> {
    for (p, c) in [
        ("<=", b'<'),
        ("≤", b'<'),
        ("<", b'<'),
        (">=", b'>'),
        ("≥", b'>'),
        (">", b'>'),
    ] {
        if let Some(r) = s.strip_prefix(p) {
            w.censored = c;
            *s = trim_space_start(r);
            break;
        }
    }
    // `(`, a sign and a currency, each at most once and in any order: `-$5`, `$-5`,
    // `($5)`, `$(5)`. A sign inside parentheses is refused.
    for _ in 0..3 {
        if !w.paren && !*signed {
            if let Some(r) = s.strip_prefix('(') {
                w.paren = true;
                *s = r;
                continue;
            }
        }
        let sign = if let Some(r) = s.strip_prefix('-').or_else(|| s.strip_prefix('−')) {
            Some((true, r))
        } else {
            s.strip_prefix('+').map(|r| (false, r))
        };
        if let Some((neg, r)) = sign {
            if *signed || w.paren {
                return None;
            }
            (*signed, *negative, *s) = (true, neg, r);
            continue;
        }
        if w.currency.is_none() {
            if let Some((c, r)) = currency_prefix(s) {
                w.currency = Some(c);
                *s = trim_space_start(r);
                continue;
            }
        }
        break;
    }
    Some(())
}

/// `)`, `%`, a currency and a scale after the digits.
fn suffixes(s: &mut &str, w: &mut Written) -> Option<()> {
    if w.paren {
        *s = s.strip_suffix(')')?;
        if w.censored != 0 {
            return None;
        }
    }
    if let Some(r) = s.strip_suffix('%') {
        if w.currency.is_some() {
            return None;
        }
        w.percent = true;
        *s = trim_space_end(r);
    }
    if w.currency.is_none() && !w.percent {
        if let Some((c, r)) = currency_suffix(s) {
            w.currency = Some(c);
            *s = trim_space_end(r);
        }
    }
    if !w.percent {
        for (i, (suffix, canonical, _)) in SCALES.iter().enumerate() {
            if let Some(r) = s.strip_suffix(suffix) {
                if r.as_bytes().last().is_some_and(u8::is_ascii_digit) {
                    w.scale = SCALE_NAMES
                        .iter()
                        .position(|(n, _)| n == canonical)
                        .unwrap_or(i) as u8;
                    *s = r;
                }
                break;
            }
        }
    }
    Some(())
}

/// Whether digits `d[..to]`, cut at the separators `cuts`, are well-formed groups of three: a first
/// group of one to three digits not starting with 0, then groups of exactly three.
fn grouped(d: &[u8], cuts: &[(u8, usize)], to: usize) -> bool {
    let first = cuts[0].1;
    if !(1..=3).contains(&first) || d[0] == b'0' {
        return false;
    }
    let mut prev = first;
    for c in cuts[1..].iter().map(|s| s.1).chain(std::iter::once(to)) {
        if c - prev != 3 {
            return false;
        }
        prev = c;
    }
    true
}

/// The number `int.frac` from ASCII digits.
fn number(d: &[u8], int_end: usize) -> Option<f64> {
    let mut buf = [0u8; MAX_DIGITS + 1];
    buf[..int_end].copy_from_slice(&d[..int_end]);
    let mut n = int_end;
    if int_end < d.len() {
        buf[n] = b'.';
        n += 1;
        buf[n..n + d.len() - int_end].copy_from_slice(&d[int_end..]);
        n += d.len() - int_end;
    }
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// Read the digits and separators left once notation is stripped.
fn core(b: &[u8], w: &mut Written) -> Option<()> {
    let mut d = [0u8; MAX_DIGITS];
    let mut nd = 0;
    let mut seps = [(0u8, 0usize); MAX_SEPS];
    let mut ns = 0;
    let mut i = 0;
    let mut after_digit = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            if nd == MAX_DIGITS {
                return None;
            }
            d[nd] = c;
            nd += 1;
            i += 1;
            after_digit = true;
            continue;
        }
        let (code, len) = match (c, b.get(i + 1), b.get(i + 2)) {
            (b',', ..) => (COMMA, 1),
            (b'.', ..) => (DOT, 1),
            (b' ', ..) => (SPACE, 1),
            (b'\'', ..) => (APOS, 1),
            (0xC2, Some(0xA0), _) => (NBSP, 2),
            (0xE2, Some(0x80), Some(0x89)) => (THIN, 3),
            (0xE2, Some(0x80), Some(0xAF)) => (NNBSP, 3),
            _ => return None,
        };
        if !after_digit || ns == MAX_SEPS {
            return None;
        }
        seps[ns] = (code, nd);
        ns += 1;
        after_digit = false;
        i += len;
    }
    if !after_digit {
        return None;
    }
    let d = &d[..nd];
    let seps = &seps[..ns];
    let Some(&(last, last_at)) = seps.last() else {
        w.value = number(d, nd)?;
        w.alt = w.value;
        return Some(());
    };
    let same = seps.iter().all(|s| s.0 == last);
    if same && (seps.len() >= 2 || last & SPACES != 0) {
        // Only grouping: `1,234,567`, `1.234.567`, `1 234`.
        if !grouped(d, seps, nd) {
            return None;
        }
        w.group = last;
        w.value = number(d, nd)?;
    } else if same {
        // One comma or dot.
        if last_at <= 3 && d[0] != b'0' && nd - last_at == 3 {
            let int = number(d, nd)?;
            let frac = number(d, last_at)?;
            w.ambiguous = last;
            (w.value, w.alt, w.fraction) = if last == COMMA {
                (int, frac, false)
            } else {
                (frac, int, true)
            };
            return Some(());
        }
        if last_at > 1 && d[0] == b'0' {
            return None; // `01,5`: a code more likely than a number
        }
        w.decimal = last;
        w.fraction = true;
        w.value = number(d, last_at)?;
    } else {
        // Grouping, then one decimal mark: `1,234.5`, `1.234.567,89`, `1 234,5`.
        let group = seps[0].0;
        if last & (COMMA | DOT) == 0 || seps[..seps.len() - 1].iter().any(|s| s.0 != group) {
            return None;
        }
        if !grouped(d, &seps[..seps.len() - 1], last_at) {
            return None;
        }
        w.group = group;
        w.decimal = last;
        w.fraction = true;
        w.value = number(d, last_at)?;
    }
    w.alt = w.value;
    Some(())
}

/// Whether a lone value is a written number, and whether it is whole: for header
/// sniffing and type consistency, where plain numbers were already tried.
pub(crate) fn lone(v: &str) -> Option<bool> {
    let w = parse(v)?;
    // A plain-looking leftover (`1.`) is not a notation; the plain parser decides those.
    if w.is_plain() && w.decimal == 0 {
        return None;
    }
    Some(w.is_integral())
}

#[cfg(test)]
mod tests;
