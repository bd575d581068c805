//! A column's written numbers: the convention its cells agree on, and their moments
//! under that convention.

use super::{sep_text, Written, COMMA, DOT, SCALE_NAMES, SPACES};

/// Running count, mean and variance (Welford), with the extremes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Moments {
    pub n: u64,
    pub mean: f64,
    pub m2: f64,
    pub min: f64,
    pub max: f64,
}

impl Moments {
    #[inline]
    pub(crate) fn add(&mut self, x: f64) {
        if self.n == 0 {
            (self.min, self.max) = (x, x);
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Both sets of values together (Chan et al.'s pairwise update).
    pub(crate) fn merge(&mut self, o: &Moments) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let n = (self.n + o.n) as f64;
        let d = o.mean - self.mean;
        self.mean += d * o.n as f64 / n;
        self.m2 += o.m2 + d * d * self.n as f64 * o.n as f64 / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// The same values divided by `k`.
    fn divided(mut self, k: f64) -> Moments {
        self.mean /= k;
        self.m2 /= k * k;
        self.min /= k;
        self.max /= k;
        self
    }
}

/// A column's written numbers under one reading of its ambiguous cells.
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    /// Values with their scale applied.
    m: Moments,
    /// Some value has a written fraction.
    frac_written: bool,
    /// Some value, scale applied, is not whole.
    frac_base: bool,
}

impl Side {
    fn merge(&mut self, o: &Side) {
        self.m.merge(&o.m);
        self.frac_written |= o.frac_written;
        self.frac_base |= o.frac_base;
    }

    fn add(&mut self, x: f64, fraction: bool, k: f64) {
        let base = x * k;
        self.m.add(base);
        self.frac_written |= fraction;
        self.frac_base |= base.fract() != 0.0;
    }
}

/// What a column's written numbers come to, once their convention is decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    /// The written numbers' moments, in the unit of [`super::ColumnProfile::min`].
    pub moments: Moments,
    /// Every written number is whole in that unit.
    pub integral: bool,
    /// The convention, in the vocabulary of [`super::ColumnProfile::notation`].
    pub notation: Vec<String>,
}

/// Accumulates a column's written numbers (the cells [`parse`] read and the plain
/// parser did not): what each convention implies, and the moments under both readings
/// of the ambiguous `d,ddd` / `d.ddd` cells.
#[derive(Debug, Clone, Default)]
pub(crate) struct Column {
    /// Cells added.
    pub cells: u64,
    groups: u8,
    decimals: u8,
    amb_comma: bool,
    amb_dot: bool,
    percent: bool,
    paren: bool,
    lt: bool,
    gt: bool,
    /// Cells that are bounds (`<10`, `>2000`).
    censored: u64,
    currency: Option<&'static str>,
    currencies: u8,
    /// Bit per [`SCALE_NAMES`] index.
    scales: u8,
    /// Ambiguous commas group, ambiguous dots are decimal points.
    a: Side,
    /// Ambiguous commas are decimal commas, ambiguous dots group.
    b: Side,
}

impl Column {
    pub(crate) fn add(&mut self, w: &Written) {
        self.cells += 1;
        self.groups |= w.group;
        self.decimals |= w.decimal;
        self.amb_comma |= w.ambiguous == COMMA;
        self.amb_dot |= w.ambiguous == DOT;
        self.percent |= w.percent;
        self.paren |= w.paren;
        self.lt |= w.censored == b'<';
        self.gt |= w.censored == b'>';
        self.censored += u64::from(w.censored != 0);
        if let Some(c) = w.currency {
            if self.currency.is_some_and(|x| x != c) {
                self.currencies = 2;
            } else if self.currency.is_none() {
                self.currency = Some(c);
                self.currencies = 1;
            }
        }
        self.scales |= 1 << w.scale;
        let k = SCALE_NAMES[w.scale as usize].1;
        self.a.add(w.value, w.fraction, k);
        let alt_frac = if w.ambiguous != 0 {
            !w.fraction
        } else {
            w.fraction
        };
        self.b.add(w.alt, alt_frac, k);
    }

    /// Adds the cells of `o`, as if each had been added here.
    pub(crate) fn merge(&mut self, o: &Column) {
        self.cells += o.cells;
        self.groups |= o.groups;
        self.decimals |= o.decimals;
        self.amb_comma |= o.amb_comma;
        self.amb_dot |= o.amb_dot;
        self.percent |= o.percent;
        self.paren |= o.paren;
        self.lt |= o.lt;
        self.gt |= o.gt;
        self.censored += o.censored;
        match (self.currency, o.currency) {
            (Some(a), Some(b)) if a != b => self.currencies = 2,
            (None, Some(b)) => {
                self.currency = Some(b);
                self.currencies = o.currencies;
            }
            _ => self.currencies = self.currencies.max(o.currencies),
        }
        self.scales |= o.scales;
        self.a.merge(&o.a);
        self.b.merge(&o.b);
    }

    /// The column's convention and its numbers, given the plain cells beside them
    /// (`plain` of them, `plain_floats` with a decimal point); None when the cells do not
    /// agree on one convention (`1.234,5` beside `1,234.5`, `$` beside `€`).
    /// `small_ints`: the column's plain numbers are three or more integers, all below a
    /// thousand in size; beside them, `d.ddd` cells are the numbers from a thousand up
    /// with their group mark (`1.613` among `379`, `49`), not three-decimal fractions.
    pub(crate) fn resolve(
        &self,
        plain: u64,
        plain_floats: u64,
        small_ints: bool,
    ) -> Option<Resolved> {
        // Bounds and nothing else (`<=50K`, `>50K`) are the labels of classes, not
        // measurements some of which fell below a limit.
        if self.censored > 0 && self.censored == self.cells && plain == 0 {
            return None;
        }
        let decimals_seen = self.decimals | if plain_floats > 0 { DOT } else { 0 };
        // Evidence for each reading of the ambiguous cells; with none, a lone comma
        // groups (`1,234`) and a lone dot is a decimal point.
        let euro = self.groups & DOT != 0
            || decimals_seen & COMMA != 0
            || (small_ints && self.amb_dot && plain_floats == 0);
        let anglo = self.groups & COMMA != 0 || decimals_seen & DOT != 0;
        let spaced = self.groups & SPACES != 0;
        let comma_decimal = (euro || spaced) && !anglo;
        let dot_groups = euro && !anglo;
        let mut groups = self.groups;
        let mut decimals = decimals_seen;
        if self.amb_comma {
            if comma_decimal {
                decimals |= COMMA;
            } else {
                groups |= COMMA;
            }
        }
        if self.amb_dot {
            if dot_groups {
                groups |= DOT;
            } else {
                decimals |= DOT;
            }
        }
        if groups.count_ones() > 1
            || decimals.count_ones() > 1
            || groups & decimals != 0
            || self.currencies > 1
        {
            return None;
        }
        let side = if self.amb_comma {
            comma_decimal
        } else {
            dot_groups
        };
        let side = if side { &self.b } else { &self.a };
        // One scale on every number: figures in the written unit (3100 for `$3,100M`);
        // mixed scales (or plain numbers beside them): figures in units.
        let scales = self.scales | if plain > 0 { 1 } else { 0 };
        let (moments, integral) = if scales.count_ones() == 1 && scales != 1 {
            let k = SCALE_NAMES[scales.trailing_zeros() as usize].1;
            (side.m.divided(k), !side.frac_written)
        } else {
            (side.m, !side.frac_base)
        };
        let mut notation = Vec::new();
        if groups != 0 {
            notation.push(format!("thousands \"{}\"", sep_text(groups)));
        }
        if decimals == COMMA {
            notation.push("decimal \",\"".to_string());
        }
        if self.percent {
            notation.push("percent".to_string());
        }
        if let Some(c) = self.currency {
            notation.push(format!("currency \"{c}\""));
        }
        for (i, (name, _)) in SCALE_NAMES.iter().enumerate().skip(1) {
            if self.scales & (1 << i) != 0 {
                notation.push(format!("scale \"{name}\""));
            }
        }
        if self.paren {
            notation.push("negative \"(…)\"".to_string());
        }
        if self.lt {
            notation.push("censored \"<\"".to_string());
        }
        if self.gt {
            notation.push("censored \">\"".to_string());
        }
        Some(Resolved {
            moments,
            integral,
            notation,
        })
    }
}
