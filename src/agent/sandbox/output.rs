//! Capturing a stream in bounded memory: the head and the tail of what a script prints,
//! however much it prints, cut to a budget before it enters a prompt.

use std::collections::VecDeque;

/// The head and tail of a stream, and how many bytes it had in all.
#[derive(Debug)]
pub(crate) struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    /// A capture keeping at most `budget` bytes: the first half and the last half.
    pub(crate) fn new(budget: usize) -> Capture {
        let head_cap = budget / 2;
        Capture {
            head_cap,
            tail_cap: budget - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    /// Take in the next bytes of the stream.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let n = room.min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_cap..]);
        } else {
            self.tail.extend(data);
            let over = self.tail.len().saturating_sub(self.tail_cap);
            self.tail.drain(..over);
        }
    }

    /// The text kept (lossy UTF-8, cut on character boundaries, with a marker where
    /// bytes were dropped) and the stream's full size in bytes.
    pub(crate) fn finish(self) -> (String, u64) {
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept == self.total {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return (String::from_utf8_lossy(&all).into_owned(), self.total);
        }
        // A cut may fall inside a multi-byte character: drop its pieces rather than
        // show replacement characters, and count them as cut.
        let head = trim_partial_end(&self.head);
        let tail = trim_partial_start(&tail);
        let cut = self.total - (head.len() + tail.len()) as u64;
        let text = format!(
            "{}\n[… {cut} bytes cut …]\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        );
        (text, self.total)
    }
}

/// `b` without an incomplete UTF-8 sequence at its end.
fn trim_partial_end(b: &[u8]) -> &[u8] {
    // A character is at most 4 bytes: look at the last 3 for the start of one that
    // does not fit.
    for back in 1..=3.min(b.len()) {
        let i = b.len() - back;
        let lead = b[i];
        if lead & 0xC0 == 0x80 {
            continue; // continuation byte, keep looking for the lead
        }
        let want = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if want > back { &b[..i] } else { b };
    }
    b
}

/// `b` without the continuation bytes of a character begun before it.
fn trim_partial_start(b: &[u8]) -> &[u8] {
    let skip = b.iter().take(3).take_while(|&&c| c & 0xC0 == 0x80).count();
    &b[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(budget: usize, chunks: &[&[u8]]) -> (String, u64) {
        let mut c = Capture::new(budget);
        for ch in chunks {
            c.push(ch);
        }
        c.finish()
    }

    #[test]
    fn within_budget_everything_is_kept() {
        assert_eq!(capture(10, &[b"hello", b" you"]), ("hello you".into(), 9));
        assert_eq!(capture(10, &[b"0123456789"]), ("0123456789".into(), 10));
        assert_eq!(capture(10, &[]), (String::new(), 0));
    }

    #[test]
    fn over_budget_head_and_tail_are_kept_with_a_marker() {
        let (text, total) = capture(10, &[b"abcdefgh", b"ijklmnop", b"qrstuvwxyz"]);
        assert_eq!(total, 26);
        assert_eq!(text, "abcde\n[… 16 bytes cut …]\nvwxyz");
    }

    #[test]
    fn tail_follows_many_small_and_one_huge_chunk() {
        let mut c = Capture::new(8);
        for _ in 0..1000 {
            c.push(b"x");
        }
        c.push(&[b'y'; 10_000]);
        c.push(b"END");
        let (text, total) = c.finish();
        assert_eq!(total, 11_003);
        assert_eq!(text, "xxxx\n[… 10995 bytes cut …]\nyEND");
    }

    #[test]
    fn cuts_never_split_a_character() {
        // "é" is 2 bytes, "€" 3: the budget's halves fall inside them.
        let s = "éééé€€€€".as_bytes();
        let mut c = Capture::new(6);
        c.push(s);
        let (text, total) = c.finish();
        assert_eq!(total, s.len() as u64);
        assert!(!text.contains('\u{FFFD}'), "{text}");
        assert!(text.starts_with("é") && text.ends_with("€"), "{text}");
        let cut: u64 = text
            .split("[… ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(cut, s.len() as u64 - "é€".len() as u64);
    }

    #[test]
    fn invalid_utf8_is_shown_lossily() {
        assert_eq!(capture(10, &[b"a\xffb"]).0, "a\u{FFFD}b");
    }
}
