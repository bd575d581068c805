//! Physical line numbers by byte offset, for a stream read once. The `csv` reader's own
//! line count skips empty lines, and pandas' `skiprows` counts them.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Read;
use std::rc::Rc;

#[derive(Default)]
struct Inner {
    /// Chunks read and not yet passed by a query: (offset of their start, bytes).
    chunks: VecDeque<(u64, Vec<u8>)>,
    /// Offset of the end of the data read so far.
    end: u64,
    /// How far into the front chunk queries have counted, and the newlines before there.
    pos: u64,
    newlines: u64,
}

/// The line index a [`Counting`] reader fills.
#[derive(Clone, Default)]
pub(super) struct Lines(Rc<RefCell<Inner>>);

impl Lines {
    /// The 1-based line holding byte `at`. Queries must not go backwards.
    pub(super) fn line_at(&self, at: u64) -> u64 {
        let mut i = self.0.borrow_mut();
        let at = at.max(i.pos);
        while let Some((start, chunk)) = i.chunks.front() {
            let (start, len) = (*start, chunk.len() as u64);
            let from = (i.pos - start) as usize;
            let to = (at.min(start + len) - start) as usize;
            let n = memchr::memchr_iter(b'\n', &chunk[from..to]).count() as u64;
            i.newlines += n;
            i.pos = start + to as u64;
            if at >= start + len {
                i.chunks.pop_front();
            } else {
                break;
            }
        }
        i.newlines + 1
    }

    /// The first offset from `at` on that is not a line break: where a record that the
    /// reader says starts at `at` (after the empty lines it skipped) really starts.
    pub(super) fn past_breaks(&self, at: u64) -> u64 {
        let i = self.0.borrow();
        let mut at = at;
        for (start, chunk) in &i.chunks {
            let end = start + chunk.len() as u64;
            if at >= end {
                continue;
            }
            let from = at.saturating_sub(*start) as usize;
            match chunk[from..]
                .iter()
                .position(|b| !matches!(b, b'\n' | b'\r'))
            {
                Some(k) => return at.max(*start) + k as u64,
                None => at = end,
            }
        }
        at
    }
}

/// A reader that keeps what it reads until [`Lines::line_at`] has passed it.
pub(super) struct Counting<R> {
    inner: R,
    lines: Lines,
}

impl<R: Read> Counting<R> {
    pub(super) fn new(inner: R) -> (Self, Lines) {
        let lines = Lines::default();
        (
            Counting {
                inner,
                lines: lines.clone(),
            },
            lines,
        )
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            let mut i = self.lines.0.borrow_mut();
            let end = i.end;
            i.chunks.push_back((end, buf[..n].to_vec()));
            i.end += n as u64;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_by_offset_across_chunks() {
        let text = b"a\n\n\nb,c\n\"x\ny\"\nz";
        // One byte per read: every offset falls in its own chunk.
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((&b, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = b;
                self.0 = rest;
                Ok(1)
            }
        }
        let (mut r, lines) = Counting::new(OneByte(text));
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        assert_eq!(all, text);
        assert_eq!(lines.past_breaks(2), 4);
        assert_eq!(
            [0, 4, 8, 11, 14].map(|at| lines.line_at(at)),
            [1, 4, 5, 6, 7]
        );
    }
}
