//! One streaming pass that cuts the records of a delimited file into tables and profiles
//! each: records are held only while a table's start is being found (up to
//! [`HOLD`] of them) or while a break in a table (a blank row, a title, a change of
//! width) is looked past ([`LOOKAHEAD`]); every other record goes straight into its
//! table's column profiles.

use super::layout::{self, Signature};
use super::sniff::{class, Cls, HeadRec, SNIFF_LINES};
use crate::analyze::model::Keep;
use crate::analyze::profile::{ColumnBuilder, ColumnProfile};
use std::collections::VecDeque;

/// Records held to find where a table starts.
const HOLD: usize = SNIFF_LINES;
/// Records looked at past a break before deciding it was part of the table.
const LOOKAHEAD: usize = 20;
/// Notes (title, preamble and footer lines) kept per table.
const NOTES: usize = 3;
/// Characters kept of a note line.
const NOTE_CHARS: usize = 100;

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
    rec.iter()
        .filter(|f| !f.iter().all(u8::is_ascii_whitespace))
        .count()
}

impl Held {
    fn filled(&self) -> usize {
        filled(&self.rec)
    }

    fn row(&self) -> HeadRec {
        let fields: Vec<String> = self
            .rec
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let first = fields.first().map_or("", |f| f.trim_start());
        HeadRec {
            comment: first.starts_with('#') || first.starts_with('%') || first.starts_with("//"),
            fields,
            line: self.line,
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
}

struct Current {
    out: TableOut,
    sig: Signature,
    builders: Vec<ColumnBuilder>,
    keep: Keep,
}

impl Current {
    fn push(&mut self, h: &Held) {
        self.push_record(&h.rec, h.line, h.end_line, h.byte);
    }

    fn push_record(&mut self, rec: &csv::ByteRecord, line: u64, end_line: u64, byte: u64) {
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
        if filled(rec) == 1 {
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
    }

    /// A record that may end the table: blank, a lone cell at the left (a title, a
    /// note) unless the table has such rows itself, another width. A table's first row
    /// never ends it.
    fn breaks(&self, rec: &csv::ByteRecord) -> bool {
        if self.out.rows == 0 {
            return false;
        }
        let filled = filled(rec);
        filled == 0
            || (filled == 1 && !self.out.sparse && self.out.width >= 2 && lone_at_left(rec))
            || rec.len() != self.out.width
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
pub(super) struct Splitter {
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
}

impl Splitter {
    pub(super) fn new(split_until: u64, keep: Keep) -> Splitter {
        Splitter {
            split_until,
            queue: VecDeque::new(),
            pending: Vec::new(),
            current: None,
            notes: Vec::new(),
            done: Vec::new(),
            keep,
        }
    }

    /// Take one record. The common case, a row inside an open table with nothing held,
    /// goes straight into the profiles without a copy.
    pub(super) fn push(&mut self, rec: &csv::ByteRecord, line: u64, end_line: u64, byte: u64) {
        if self.queue.is_empty() && self.pending.is_empty() {
            if let Some(cur) = &mut self.current {
                if byte >= self.split_until || !cur.breaks(rec) {
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
        if let Some(cur) = self.current.take() {
            self.done.push(cur.finish());
        }
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
                            if h.byte >= self.split_until || !cur.breaks(&h.rec) {
                                cur.push(&h);
                            } else {
                                self.pending.push(h);
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
            },
            sig: f.signature,
            builders,
            keep: self.keep,
        });
        for h in self.pending.drain(..).rev() {
            self.queue.push_front(h);
        }
    }

    /// After a break: the records since continue the table (a data row came), or a new
    /// table starts (a header row came), or, past [`LOOKAHEAD`], they are rows.
    fn look_past_break(&mut self) {
        let Some(cur) = &mut self.current else { return };
        let Some(last) = self.pending.last() else {
            return;
        };
        let row = last.row();
        // A header row after a blank row or a title starts a new table; without them,
        // only one of another width under typed columns does (in an all-text table
        // every row reads like a header).
        let separated = self.pending[..self.pending.len() - 1]
            .iter()
            .any(|h| h.note_like());
        let new_header = cur.sig.headerish(&row)
            && (separated || (cur.sig.typed() && last.rec.len() != cur.out.width))
            && last.byte < self.split_until;
        if !new_header && !cur.breaks(&last.rec) {
            for h in self.pending.drain(..) {
                cur.push(&h);
            }
        } else if new_header {
            // Lines before the first blank row are this table's footer; the rest go to
            // the next table.
            let blank = self.pending.iter().position(|h| h.filled() == 0);
            let hdr = self.pending.len() - 1;
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
            for h in rest.into_iter().rev() {
                self.queue.push_front(h);
            }
        } else if self.pending.len() > LOOKAHEAD {
            for h in self.pending.drain(..) {
                cur.push(&h);
            }
        }
    }

    /// End of input inside a break: rows up to the last one that is not a note are the
    /// table's; the notes after it are its footer.
    fn end_at_eof(&mut self) {
        let Some(cur) = &mut self.current else { return };
        let keep = self
            .pending
            .iter()
            .rposition(|h| !h.note_like())
            .map_or(0, |i| i + 1);
        for h in self.pending.drain(..keep) {
            cur.push(&h);
        }
        let footer = self
            .pending
            .iter()
            .filter(|h| h.filled() > 0)
            .take(NOTES)
            .map(Held::text)
            .collect();
        let followed = !self.pending.is_empty();
        self.pending.clear();
        self.close(footer, followed);
    }

    fn close(&mut self, footer: Vec<String>, followed: bool) {
        if let Some(cur) = self.current.take() {
            let mut t = cur.finish();
            t.followed = followed;
            t.footer = footer;
            self.done.push(t);
        }
    }
}
