//! One streaming pass that cuts the records of a delimited file into tables and profiles
//! each: records are held only while a table's start is being found (up to
//! [`HOLD`] of them) or while a break in a table (a blank row, a title, a change of
//! width) is looked past ([`LOOKAHEAD`]); every other record goes straight into its
//! table's column profiles.

use super::layout::{self, Signature};
use super::sniff::{class, Cls, HeadRec, SNIFF_LINES};
use crate::analyze::model::Keep;
use crate::analyze::profile::{ColumnBuilder, ColumnProfile};
use crate::analyze::regions::{self, Figures};
use crate::analyze::rules::{self, Applied, ReadingRule};
use std::collections::VecDeque;

/// Records held to find where a table starts.
const HOLD: usize = SNIFF_LINES;
/// Records looked at past a break before deciding it was part of the table.
const LOOKAHEAD: usize = 20;
/// Notes (title, preamble and footer lines) kept per table.
const NOTES: usize = 3;
/// Characters kept of a note line.
const NOTE_CHARS: usize = 100;
/// Rows of a table whose figures (sums, means) are kept to check a summary row against:
/// past them a summary row is told by its label alone, and no cell is parsed twice.
/// Tables that end in a row of unlabelled sums are short reports; a thousand rows keep
/// the second parse off the bulk of a large table.
const FIGURE_ROWS: u64 = 1_000;

/// One record as read, with where it is.
pub(super) struct Held {
    pub rec: csv::ByteRecord,
    /// 1-based physical line of its start.
    pub line: u64,
    /// 1-based physical line of its end (past quoted newlines).
    pub end_line: u64,
    /// Byte offset of its start in the (transcoded) stream.
    pub byte: u64,
}

/// Only the first cell holds something.
fn lone_at_left(rec: &csv::ByteRecord) -> bool {
    rec.iter()
        .skip(1)
        .all(|f| f.iter().all(u8::is_ascii_whitespace))
}

/// Non-empty cells of a record.
fn filled(rec: &csv::ByteRecord) -> usize {
    filled_upto(rec, usize::MAX)
}

/// Non-empty cells of a record, counted up to `cap`: the tests on every row ask only
/// whether there are none or one.
fn filled_upto(rec: &csv::ByteRecord, cap: usize) -> usize {
    rec.iter()
        .filter(|f| !f.iter().all(u8::is_ascii_whitespace))
        .take(cap)
        .count()
}

impl Held {
    fn filled(&self) -> usize {
        filled(&self.rec)
    }

    fn row(&self) -> HeadRec {
        Held::row_of(&self.rec, self.line)
    }

    fn row_of(rec: &csv::ByteRecord, line: u64) -> HeadRec {
        let fields: Vec<String> = rec
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let first = fields.first().map_or("", |f| f.trim_start());
        HeadRec {
            comment: first.starts_with('#') || first.starts_with('%') || first.starts_with("//"),
            fields,
            line,
        }
    }

    /// The record as a note line: its non-empty cells.
    fn text(&self) -> String {
        let cells: Vec<String> = self
            .rec
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        crate::text_util::cut_chars(&crate::analyze::collapse(&cells.join(", ")), NOTE_CHARS)
    }

    /// A blank row or one lone text cell at the left: a title, a note, a footer.
    fn note_like(&self) -> bool {
        match self.filled() {
            0 => true,
            1 => {
                lone_at_left(&self.rec)
                    && class(&String::from_utf8_lossy(&self.rec[0])) == Some(Cls::Text)
            }
            _ => false,
        }
    }
}

/// A table cut out of the stream and profiled.
#[derive(Debug)]
pub(super) struct TableOut {
    /// The title line above it, if any.
    pub title: Option<String>,
    /// Lines above it (title included), the first [`NOTES`].
    pub preamble: Vec<String>,
    /// Lines right below it (`Source: …`), the first [`NOTES`].
    pub footer: Vec<String>,
    /// Whether a header row names the columns.
    pub header: bool,
    /// Header names had spaces after the delimiter, dropped (`skipinitialspace`).
    pub skip_initial_space: bool,
    /// Grouping rows merged into the names.
    pub groups: usize,
    /// 1-based line of the first grouping or header row, or of the first body row.
    pub start_line: u64,
    /// 1-based line of the header row.
    pub header_line: Option<u64>,
    /// 1-based line of the first body row.
    pub body_line: u64,
    /// 1-based line where the last body row ends.
    pub last_line: u64,
    /// Field count of the header (or first) row.
    pub width: usize,
    /// Most fields in any row.
    pub max_fields: usize,
    pub rows: u64,
    pub ragged: u64,
    pub columns: Vec<ColumnProfile>,
    pub samples: Vec<Vec<String>>,
    /// Records follow the table (another table, a footer, blank rows): a reader must stop
    /// after `rows` rows.
    pub followed: bool,
    /// Byte offset of the first body row, to extrapolate from a sample.
    pub body_byte: u64,
    /// Most body rows have a single value: lone cells are rows here, not notes.
    pub sparse: bool,
    /// Body rows with a single value.
    pub lone: u64,
    /// Physical lines at the end of the file to drop (a footer past a sample).
    pub skip_footer: u64,
    /// Reading decisions about where the table is, for its notes ("line 9 (Total) kept
    /// as a note: a summary row").
    pub decisions: Vec<String>,
}

struct Current {
    out: TableOut,
    sig: Signature,
    builders: Vec<ColumnBuilder>,
    keep: Keep,
    /// Rows that may sum the table up (a summary label, or figures without a label),
    /// held out of the profiles until a data row follows (then they are data) or the
    /// table ends (then [`Current::settle`] decides).
    held: Vec<Held>,
    /// Summary-labelled rows met amid the data: here such labels are categories, and a
    /// last one is a summary only when its figures check.
    labelled_data: u64,
    /// Figures of each column over the profiled rows (the first [`FIGURE_ROWS`]).
    figures: Vec<Figures>,
    /// Summary rows are looked for ([`ReadingRule::SummaryRows`] is on).
    summaries: bool,
    /// The first column holds text labels: an empty one may stand for a summary row.
    text_labels: bool,
    /// Line where the last record taken (profiled or held) ends, to see blank lines.
    prev_end: u64,
    /// The first column of a non-text type: a letter there in a row as wide as the
    /// table may be a new header.
    typed_col: Option<usize>,
}

/// The cells of a record as text (invalid UTF-8 as empty: only labels and numbers are
/// read from them).
fn cells(rec: &csv::ByteRecord) -> Vec<&str> {
    rec.iter()
        .map(|f| std::str::from_utf8(f).unwrap_or(""))
        .collect()
}

impl Current {
    fn push(&mut self, h: &Held) {
        self.push_record(&h.rec, h.line, h.end_line, h.byte);
    }

    /// Whether a record may sum the table up: a summary label, or figures under no label
    /// at all. Cheap for ordinary rows: a letter test before any text is looked at.
    fn may_summarise(&self, rec: &csv::ByteRecord) -> bool {
        // Once such labels are categories here, only figures make a summary, and past
        // [`FIGURE_ROWS`] there are none to check against: nothing is held.
        if !self.summaries
            || self.out.width < 2
            || rec.is_empty()
            || (self.labelled_data > 0 && self.out.rows > FIGURE_ROWS)
        {
            return false;
        }
        let first = rec[0].trim_ascii();
        let label = if first.is_empty() && rec.len() > 1 {
            rec[1].trim_ascii()
        } else {
            first
        };
        match label.first() {
            Some(_) if regions::may_be_summary_label(label) => {
                regions::summary_row(&cells(rec)).is_some()
            }
            _ if first.is_empty() => {
                // No label: a row of numbers only, under a column of labels.
                self.text_labels
                    && self.out.rows >= 3
                    && filled(rec) > 0
                    && rec.iter().all(|f| {
                        f.trim_ascii().is_empty()
                            || std::str::from_utf8(f)
                                .ok()
                                .and_then(regions::number)
                                .is_some()
                    })
            }
            _ => false,
        }
    }

    fn push_record(&mut self, rec: &csv::ByteRecord, line: u64, end_line: u64, byte: u64) {
        self.prev_end = end_line;
        if self.may_summarise(rec) {
            self.held.push(Held {
                rec: rec.clone(),
                line,
                end_line,
                byte,
            });
            return;
        }
        if !self.held.is_empty() {
            self.release();
        }
        self.profile(rec, line, end_line, byte);
    }

    /// The held rows are data after all (a data row follows them).
    fn release(&mut self) {
        let held = std::mem::take(&mut self.held);
        for h in &held {
            if regions::summary_row(&cells(&h.rec)).is_some() {
                self.labelled_data += 1;
            }
            self.profile(&h.rec, h.line, h.end_line, h.byte);
        }
    }

    fn profile(&mut self, rec: &csv::ByteRecord, line: u64, end_line: u64, byte: u64) {
        let t = &mut self.out;
        if t.rows == 0 {
            t.body_line = line;
            t.body_byte = byte;
        }
        t.rows += 1;
        let n = rec.len();
        if n != t.width {
            t.ragged += 1;
        }
        t.max_fields = t.max_fields.max(n);
        t.last_line = end_line;
        if filled_upto(rec, 2) == 1 {
            t.lone += 1;
        }
        t.sparse = t.lone * 2 > t.rows;
        while self.builders.len() < n {
            // A column first seen now was missing (null) in the rows above.
            let mut b = ColumnBuilder::new(format!("column_{}", self.builders.len() + 1));
            for _ in 1..t.rows {
                b.push("");
            }
            self.builders.push(b);
        }
        let keep = t.samples.len() < self.keep.rows;
        let mut sample = Vec::new();
        for (i, f) in rec.iter().enumerate() {
            let v = String::from_utf8_lossy(f);
            self.builders[i].push(&v);
            if keep {
                sample.push(self.keep.cell(v.trim()));
            }
        }
        // Missing cells are nulls, as a reader pads them.
        for b in self.builders.iter_mut().skip(n) {
            b.push("");
        }
        if keep {
            t.samples.push(sample);
        }
        if self.summaries && t.rows <= FIGURE_ROWS {
            if self.figures.len() < n {
                self.figures.resize(n, Figures::default());
            }
            for (i, f) in rec.iter().enumerate() {
                if let Some(v) = std::str::from_utf8(f).ok().and_then(regions::number) {
                    self.figures[i].add(v);
                }
            }
        }
    }

    /// The table ends: which held rows sum it up (kept as notes, stated in the
    /// decisions) and which are data. A row sums up when its figures state the columns'
    /// sums (or means, …), or when a plain summary word (`Total`, `Mean`) labels it and no
    /// such label names a category amid the data. Rows past `split_until` (a sample's
    /// later pieces, not the table's end) are data.
    fn settle(&mut self, split_until: u64, applied: &Applied) -> bool {
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return false;
        }
        let figures_known = self.out.rows <= FIGURE_ROWS;
        let mut sums = Vec::with_capacity(held.len());
        for h in &held {
            let c = cells(&h.rec);
            let label = regions::summary_row(&c);
            let by_figures = figures_known
                && regions::figures_check(&c, &self.figures, self.out.rows, label.map(|l| l.0));
            let by_label = label.is_some_and(|(kind, l)| {
                self.labelled_data == 0 && regions::strong_summary(kind, l)
            });
            sums.push(h.byte < split_until && self.out.rows >= 2 && (by_figures || by_label));
        }
        let from = sums.iter().rposition(|s| !s).map_or(0, |i| i + 1);
        let (data, notes) = held.split_at(from);
        for h in data {
            self.profile(&h.rec, h.line, h.end_line, h.byte);
        }
        if notes.is_empty() {
            return false;
        }
        applied.add(ReadingRule::SummaryRows, notes.len() as u64);
        let labels: Vec<String> = notes
            .iter()
            .map(|h| {
                let c = cells(&h.rec);
                regions::summary_row(&c)
                    .map_or_else(|| "figures".to_string(), |(_, l)| l.to_string())
            })
            .collect();
        let (a, b) = (notes[0].line, notes[notes.len() - 1].end_line);
        self.out.decisions.push(if notes.len() == 1 {
            format!(
                "line {a} ({}) kept as a note: a summary row, not data",
                labels[0]
            )
        } else {
            format!(
                "lines {a}–{b} ({}) kept as notes: summary rows, not data",
                labels.join(", ")
            )
        });
        for h in notes {
            if self.out.footer.len() < NOTES {
                self.out.footer.push(h.text());
            }
        }
        true
    }

    /// A record that may end the table: blank, a lone cell at the left (a title, a
    /// note) unless the table has such rows itself, another width, a key/value line
    /// after a blank line, a header-like row under typed columns. A table's first row
    /// never ends it.
    fn breaks(&self, rec: &csv::ByteRecord, line: u64) -> bool {
        if self.out.rows == 0 {
            return false;
        }
        let filled = filled_upto(rec, 2);
        if filled == 0
            || (filled == 1 && !self.out.sparse && self.out.width >= 2 && lone_at_left(rec))
            || rec.len() != self.out.width
        {
            return true;
        }
        if line > self.prev_end + 1
            && rules::on(ReadingRule::KeyValueBlocks)
            && regions::key_value(&cells(rec), self.out.width)
        {
            return true;
        }
        // Text where the table has numbers or dates: maybe the header of a table below.
        self.typed_col.is_some_and(|i| {
            rec.get(i)
                .and_then(|f| f.trim_ascii().first())
                .is_some_and(u8::is_ascii_alphabetic)
                && rules::on(ReadingRule::StackedTables)
                && self.sig.heads(&Held::row_of(rec, line))
        })
    }

    /// A key/value line under this table: a label and a value at the left, the label
    /// in words or the pair unlike the table's rows (`1.,Values up to 1992 …` under
    /// text and numbers). Short rows of the table's own kind (`7,8` under numbers) are
    /// ragged rows.
    fn key_value(&self, h: &Held) -> bool {
        let c = cells(&h.rec);
        regions::key_value(&c, self.out.width)
            || (regions::label_value(&c, self.out.width) && !self.sig.data_like(&h.row()))
    }

    fn finish(mut self) -> TableOut {
        self.out.columns = self
            .builders
            .into_iter()
            .map(ColumnBuilder::finish)
            .collect();
        self.out
    }
}

/// Cuts records into tables. Feed every record with [`Splitter::push`], then call
/// [`Splitter::finish`].
pub(super) struct Splitter<'a> {
    /// Records at or past this byte offset are never taken for a break (the pieces of a
    /// sample, whose line numbers are unknown).
    split_until: u64,
    queue: VecDeque<Held>,
    pending: Vec<Held>,
    current: Option<Current>,
    /// Lines seen while no table was open, for the next table's preamble.
    notes: Vec<String>,
    done: Vec<TableOut>,
    /// First rows kept of each table.
    keep: Keep,
    /// The next table starts right below another one, with its own header.
    stacked: bool,
    /// Counts of the reading rules applied.
    applied: &'a Applied,
}

impl<'a> Splitter<'a> {
    pub(super) fn new(split_until: u64, keep: Keep, applied: &'a Applied) -> Splitter<'a> {
        Splitter {
            split_until,
            queue: VecDeque::new(),
            pending: Vec::new(),
            current: None,
            notes: Vec::new(),
            done: Vec::new(),
            keep,
            stacked: false,
            applied,
        }
    }

    /// Take one record. The common case, a row inside an open table with nothing held,
    /// goes straight into the profiles without a copy.
    pub(super) fn push(&mut self, rec: &csv::ByteRecord, line: u64, end_line: u64, byte: u64) {
        if self.queue.is_empty() && self.pending.is_empty() {
            if let Some(cur) = &mut self.current {
                if byte >= self.split_until || !cur.breaks(rec, line) {
                    cur.push_record(rec, line, end_line, byte);
                    return;
                }
            }
        }
        self.queue.push_back(Held {
            rec: rec.clone(),
            line,
            end_line,
            byte,
        });
        self.run(false);
    }

    /// The tables, in file order, and lines that belong to none.
    pub(super) fn finish(mut self) -> (Vec<TableOut>, Vec<String>) {
        self.run(true);
        self.close(Vec::new(), false);
        (self.done, self.notes)
    }

    fn run(&mut self, eof: bool) {
        loop {
            while let Some(h) = self.queue.pop_front() {
                match &mut self.current {
                    None => {
                        self.pending.push(h);
                        if self.pending.len() >= HOLD {
                            self.start(false);
                        }
                    }
                    Some(cur) => {
                        if self.pending.is_empty() {
                            if h.byte >= self.split_until || !cur.breaks(&h.rec, h.line) {
                                cur.push(&h);
                            } else {
                                // The break itself may be the next table's header.
                                self.pending.push(h);
                                self.look_past_break();
                            }
                        } else {
                            self.pending.push(h);
                            self.look_past_break();
                        }
                    }
                }
            }
            if !eof || self.pending.is_empty() {
                return;
            }
            if self.current.is_some() {
                self.end_at_eof();
            } else {
                self.start(true);
            }
        }
    }

    /// Find a table in the held records; its body rows go back into the queue.
    fn start(&mut self, eof: bool) {
        let rows: Vec<HeadRec> = self.pending.iter().map(Held::row).collect();
        let Some(f) = layout::find(&rows) else {
            // No data at all among them: notes.
            let n = if eof { self.pending.len() } else { 1 };
            for h in self.pending.drain(..n) {
                if h.filled() > 0 {
                    self.notes.push(h.text());
                }
            }
            return;
        };
        let mut pre: Vec<Held> = self.pending.drain(..f.start).collect();
        let title = pre
            .iter()
            .rev()
            .find(|h| h.filled() == 1 && h.note_like())
            .map(Held::text);
        let mut preamble = std::mem::take(&mut self.notes);
        preamble.extend(pre.drain(..).filter(|h| h.filled() > 0).map(|h| h.text()));
        preamble.truncate(NOTES);
        let head: Vec<Held> = self.pending.drain(..f.body - f.start).collect();
        let width = head.last().map_or_else(
            || self.pending.first().map_or(0, |h| h.rec.len()),
            |h| h.rec.len(),
        );
        let skip_initial_space = f
            .names
            .as_ref()
            .is_some_and(|n| n.iter().any(|c| c.starts_with(' ')));
        let builders = match &f.names {
            Some(n) => super::load::column_names(n, skip_initial_space)
                .into_iter()
                .map(ColumnBuilder::new)
                .collect(),
            None => (1..=width)
                .map(|i| ColumnBuilder::new(format!("column_{i}")))
                .collect(),
        };
        let start_line = head.first().or(self.pending.first()).map_or(0, |h| h.line);
        let mut decisions = Vec::new();
        if std::mem::take(&mut self.stacked) {
            self.applied.add(ReadingRule::StackedTables, 1);
            decisions.push(format!(
                "a table of its own from line {start_line}: it has its own header below the table above"
            ));
        }
        if f.groups > 0 {
            self.applied.add(ReadingRule::HeaderDepth, f.groups as u64);
        }
        if f.headerless_list {
            self.applied.add(ReadingRule::HeaderlessList, 1);
            decisions.push(
                "no header row: the first value is of the same kind as the rest (a headerless list)"
                    .into(),
            );
        }
        let text_labels = f.signature.text_first();
        let typed_col = f.signature.first_typed();
        let prev_end = head.last().map_or(start_line, |h| h.end_line);
        self.current = Some(Current {
            out: TableOut {
                title,
                preamble,
                footer: Vec::new(),
                header: f.names.is_some(),
                skip_initial_space,
                groups: f.groups,
                start_line,
                header_line: head.last().map(|h| h.line),
                body_line: 0,
                last_line: head.last().map_or(start_line, |h| h.end_line),
                width,
                max_fields: width,
                rows: 0,
                ragged: 0,
                columns: Vec::new(),
                samples: Vec::new(),
                followed: false,
                body_byte: 0,
                sparse: false,
                lone: 0,
                skip_footer: 0,
                decisions,
            },
            sig: f.signature,
            builders,
            keep: self.keep,
            held: Vec::new(),
            labelled_data: 0,
            figures: Vec::new(),
            summaries: rules::on(ReadingRule::SummaryRows),
            text_labels,
            prev_end,
            typed_col,
        });
        for h in self.pending.drain(..).rev() {
            self.queue.push_front(h);
        }
    }

    /// Whether the held record at `i` comes after a blank line.
    fn gap_before(&self, cur: &Current, i: usize) -> bool {
        let prev = if i == 0 {
            cur.prev_end
        } else {
            self.pending[i - 1].end_line
        };
        self.pending[i].line > prev + 1
    }

    /// After a break: the records since continue the table (a data row came), or a new
    /// table starts (a header row came), or, past [`LOOKAHEAD`], they are rows.
    fn look_past_break(&mut self) {
        let Some(cur) = &self.current else { return };
        let Some(last) = self.pending.last() else {
            return;
        };
        let n = self.pending.len();
        let row = last.row();
        // A header row after a blank line or a title starts a new table; without them,
        // only one of another width under typed columns does (in an all-text table
        // every row reads like a header).
        let separated = (0..n - 1).any(|i| self.pending[i].note_like() || self.gap_before(cur, i))
            || self.gap_before(cur, n - 1);
        // A label line (`Source:`) is no header.
        let labels = row.fields.iter().any(|f| f.trim_end().ends_with(':'));
        let new_header = cur.sig.headerish(&row)
            && !labels
            && (separated || (cur.sig.typed() && last.rec.len() != cur.out.width))
            && last.byte < self.split_until;
        // A header naming typed columns, then a row of data under it, even as wide as
        // the table and with no line between: a table stacked below this one.
        let stacked = n >= 2
            && rules::on(ReadingRule::StackedTables)
            && last.byte < self.split_until
            && cur.out.rows >= layout::STACKED_MIN_ROWS as u64
            && {
                let h = self.pending[n - 2].row();
                cur.sig.heads(&h) && h.filled() == h.fields.len() && layout::distinct(&h.fields)
            }
            && self.pending[n - 2].rec.len() == last.rec.len()
            && !cur.sig.heads(&row)
            && row.filled() >= 2;
        let stacked_at = if stacked { Some(n - 2) } else { None };
        let header_at = if new_header { Some(n - 1) } else { stacked_at };
        if let Some(hdr) = header_at {
            self.split_at(hdr);
            return;
        }
        let Some(cur) = &mut self.current else { return };
        if !cur.breaks(&last.rec, last.line) {
            for h in self.pending.drain(..) {
                cur.push(&h);
            }
        } else if self.pending.len() > LOOKAHEAD {
            if self.key_value_block() {
                // A long run of label/value lines: a table of its own.
                let rest = std::mem::take(&mut self.pending);
                self.close(Vec::new(), true);
                for h in rest.into_iter().rev() {
                    self.queue.push_front(h);
                }
                return;
            }
            let Some(cur) = &mut self.current else { return };
            for h in self.pending.drain(..) {
                cur.push(&h);
            }
        }
    }

    /// A new table's header is held at `hdr`: lines before the first blank row are this
    /// table's footer; the rest go to the next table.
    fn split_at(&mut self, hdr: usize) {
        let blank = self.pending.iter().position(|h| h.filled() == 0);
        let cut = match blank {
            Some(b) if b < hdr => b,
            _ => 0,
        };
        let footer: Vec<String> = self.pending[..cut]
            .iter()
            .filter(|h| h.filled() > 0)
            .take(NOTES)
            .map(Held::text)
            .collect();
        let rest: Vec<Held> = self.pending.drain(..).skip(cut).collect();
        self.close(footer, true);
        self.stacked = rules::on(ReadingRule::StackedTables);
        for h in rest.into_iter().rev() {
            self.queue.push_front(h);
        }
    }

    /// The held records are a key/value block below the table (label/value lines and
    /// notes, at least one label/value line), and the table itself is not ragged.
    fn key_value_block(&self) -> bool {
        let Some(cur) = &self.current else {
            return false;
        };
        if !rules::on(ReadingRule::KeyValueBlocks) || cur.out.ragged > 0 {
            return false;
        }
        self.pending.iter().any(|h| cur.key_value(h))
            && self
                .pending
                .iter()
                .all(|h| h.note_like() || cur.key_value(h))
    }

    /// End of input inside a break: a key/value block is notes; else rows up to the last
    /// one that is not a note are the table's, and the notes after it are its footer.
    fn end_at_eof(&mut self) {
        if self.key_value_block() {
            let kv = self.current.as_ref().map_or(0, |cur| {
                self.pending.iter().filter(|h| cur.key_value(h)).count()
            });
            self.applied.add(ReadingRule::KeyValueBlocks, kv as u64);
            let (a, b) = (
                self.pending[0].line,
                self.pending.last().map_or(0, |h| h.end_line),
            );
            let footer = footer_of(&self.pending);
            self.pending.clear();
            if let Some(cur) = &mut self.current {
                cur.out.decisions.push(if a == b {
                    format!("line {a} kept as a note: a key/value line below the table")
                } else {
                    format!("lines {a}–{b} kept as notes: a key/value block below the table")
                });
            }
            self.close(footer, true);
            return;
        }
        let Some(cur) = &mut self.current else { return };
        let keep = self
            .pending
            .iter()
            .rposition(|h| !h.note_like())
            .map_or(0, |i| i + 1);
        for h in self.pending.drain(..keep) {
            cur.push(&h);
        }
        let footer = footer_of(&self.pending);
        let followed = !self.pending.is_empty();
        self.pending.clear();
        self.close(footer, followed);
    }

    fn close(&mut self, footer: Vec<String>, followed: bool) {
        if let Some(mut cur) = self.current.take() {
            let summed = cur.settle(self.split_until, self.applied);
            let mut t = cur.finish();
            t.followed = followed || summed;
            // Summary rows come first in the footer: they sit right below the data.
            t.footer.extend(footer);
            t.footer.truncate(NOTES);
            self.done.push(t);
        }
    }
}

/// The first held lines that hold something, as the notes below a table.
fn footer_of(pending: &[Held]) -> Vec<String> {
    pending
        .iter()
        .filter(|h| h.filled() > 0)
        .take(NOTES)
        .map(Held::text)
        .collect()
}
