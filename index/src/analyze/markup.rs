//! A light scan of HTML source for what the parsed tree does not keep: the line of each
//! heading tag, and how deeply the markup nests.
//!
//! html5ever checks element scopes by walking the stack of open elements, so parse time
//! grows with nesting depth times tag count: 50,000 unclosed `<div>`s take minutes. The
//! scan bounds both before parsing. It is hand-written because it only needs tag names
//! and line numbers; a full tokenizer pass would cost as much as the parse it guards.

/// A start or end tag found in the source.
struct Tag<'a> {
    /// Offset of its `<`.
    at: usize,
    /// 1-based line of its `<`.
    line: u64,
    end: bool,
    /// Tag name as written (any case).
    name: &'a [u8],
}

/// Tags in source order, outside comments, doctypes and the content of raw-text
/// elements (script, style, ...), where a `<` is no tag.
struct Tags<'a> {
    b: &'a [u8],
    i: usize,
    line: u64,
}

const RAW_TEXT: [&[u8]; 7] = [
    b"script",
    b"style",
    b"textarea",
    b"title",
    b"noscript",
    b"xmp",
    b"plaintext",
];

impl<'a> Tags<'a> {
    fn new(src: &'a str) -> Self {
        Tags {
            b: src.as_bytes(),
            i: 0,
            line: 1,
        }
    }

    /// Move to `to`, counting the newlines passed.
    fn advance(&mut self, to: usize) {
        let to = to.min(self.b.len());
        if to > self.i {
            self.line += memchr::memchr_iter(b'\n', &self.b[self.i..to]).count() as u64;
            self.i = to;
        }
    }

    /// The offset after the `</name` closing a raw-text element, or the end.
    fn find_close(&self, from: usize, name: &[u8]) -> usize {
        let b = self.b;
        for p in memchr::memmem::find_iter(&b[from..], b"</") {
            let start = from + p + 2;
            if b.get(start..start + name.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            {
                return start + name.len();
            }
        }
        b.len()
    }
}

impl<'a> Iterator for Tags<'a> {
    type Item = Tag<'a>;

    fn next(&mut self) -> Option<Tag<'a>> {
        let b = self.b;
        loop {
            let at = self.i + memchr::memchr(b'<', b.get(self.i..)?)?;
            self.advance(at);
            let rest = &b[at + 1..];
            if rest.starts_with(b"!--") {
                let end =
                    memchr::memmem::find(&b[at + 4..], b"-->").map_or(b.len(), |p| at + 4 + p + 3);
                self.advance(end);
                continue;
            }
            let end = rest.first() == Some(&b'/');
            let name_start = at + 1 + usize::from(end);
            let name_len = b[name_start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            let starts_alpha = b.get(name_start).is_some_and(u8::is_ascii_alphabetic);
            if name_len == 0 || !starts_alpha {
                // `<!doctype`, `<?xml`, a lone `<`: no tag.
                self.advance(at + 1);
                continue;
            }
            let name = &b[name_start..name_start + name_len];
            let tag = Tag {
                at,
                line: self.line,
                end,
                name,
            };
            let after = name_start + name_len;
            let next = match RAW_TEXT.iter().find(|r| name.eq_ignore_ascii_case(r)) {
                Some(r) if !end => self.find_close(after, r),
                _ => after,
            };
            self.advance(next);
            return Some(tag);
        }
    }
}

/// `(level, line)` of every `<h1>`–`<h6>` start tag. html5ever makes heading elements only
/// from such tags, so the n-th heading element of a level is (almost always) the n-th tag
/// of that level found here.
pub(crate) fn heading_tags(src: &str) -> Vec<(u8, u64)> {
    Tags::new(src)
        .filter(|t| !t.end && t.name.len() == 2 && matches!(t.name[0], b'h' | b'H'))
        .filter_map(|t| match t.name[1] {
            d @ b'1'..=b'6' => Some((d - b'0', t.line)),
            _ => None,
        })
        .collect()
}

/// Elements that never hold children, or that the parser closes by itself when a sibling
/// starts (`<p>`, `<li>`, `<td>` ...): they add no lasting depth.
const FLAT: [&[u8]; 30] = [
    b"area",
    b"base",
    b"br",
    b"col",
    b"embed",
    b"hr",
    b"img",
    b"input",
    b"link",
    b"meta",
    b"param",
    b"source",
    b"track",
    b"wbr",
    b"p",
    b"li",
    b"dt",
    b"dd",
    b"td",
    b"th",
    b"tr",
    b"tbody",
    b"thead",
    b"tfoot",
    b"option",
    b"optgroup",
    b"colgroup",
    b"rb",
    b"rt",
    b"rp",
];

/// Where to cut the source so that parsing it stays cheap: the offset of the first tag at
/// which the nesting depth would exceed `max_depth`, or the sum over start tags of the
/// depth they open at would exceed `max_cost`. `None` when the whole source is fine.
/// Depth is estimated from the tags (end tags close one level), so it errs high.
pub(crate) fn parse_cut(src: &str, max_depth: u64, max_cost: u64) -> Option<(usize, u64)> {
    let mut depth = 0u64;
    let mut cost = 0u64;
    for t in Tags::new(src) {
        if FLAT.iter().any(|f| t.name.eq_ignore_ascii_case(f)) {
            continue;
        }
        if t.end {
            depth = depth.saturating_sub(1);
            continue;
        }
        cost += depth;
        depth += 1;
        if depth > max_depth || cost > max_cost {
            return Some((t.at, depth));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_lines_skip_comments_and_scripts() {
        let src = "<html>\n<!-- <h1>no</h1>\n -->\n<H1 class=x>A</H1>\n\
                   <script>document.write('<h2>no</h2>')</script>\n<h2>B</h2><h3>C</h3>\n\
                   <header>not a heading</header><h7>no</h7>";
        assert_eq!(heading_tags(src), [(1, 4), (2, 6), (3, 6)]);
    }

    #[test]
    fn deep_or_costly_markup_is_cut() {
        let flat = "<table><tr><td>1<td>2<tr><td>3</table><p>a<p>b<br>";
        assert_eq!(parse_cut(flat, 3, 100), None);
        let deep = "<div>".repeat(10) + "x";
        assert_eq!(parse_cut(&deep, 4, 1000), Some((20, 5)));
        // Shallow but long: cost 0+1+1+1... past 5 at the seventh start tag.
        let long = "<div>".to_string() + &"<i>x</i>".repeat(10);
        assert_eq!(parse_cut(&long, 10, 5), Some((5 + 8 * 5, 2)));
        assert_eq!(parse_cut("<div></div>", 1, 0), None);
    }
}
