//! OBJ text as logical lines and tokens, and the places where it may be cut into windows.
//!
//! A physical line ends at `\n`, `\r\n` or a `\r` alone (files written with any of the three
//! conventions, or a mix of them, read the same); a comment (from `#`) is cut off. A physical
//! line whose remaining text ends with `\` continues on the next one: together they make one
//! logical line. Whether a physical line continues depends on that line alone, so the text can
//! be cut after any line end of a line which does not continue ([`logical_boundary`]; never
//! between the two bytes of a `\r\n`), and the pieces read alone give the same logical lines.
//!
//! A UTF-8 byte-order mark at the very start of a file is not text: [`text_start`] says where
//! the text begins.

use std::borrow::Cow;

/// The UTF-8 encoding of U+FEFF, which some editors write first in a file to mark it UTF-8.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// Where the text of a whole file begins: past a leading byte-order mark, if it has one.
pub(crate) fn text_start(file: &[u8]) -> usize {
    if file.starts_with(BYTE_ORDER_MARK) {
        BYTE_ORDER_MARK.len()
    } else {
        0
    }
}

/// The end of the physical line that holds `data[from]` (or starts there): the range of its
/// terminator (`\n`, `\r\n` or a lone `\r`), or None when the text ends before one.
#[inline]
fn terminator(data: &[u8], from: usize) -> Option<(usize, usize)> {
    let at = from + memchr::memchr2(b'\n', b'\r', data.get(from..)?)?;
    Some((at, past_terminator(data, at)))
}

/// Just past the line end starting at `data[at]` (a `\n` or a `\r`).
#[inline]
fn past_terminator(data: &[u8], at: usize) -> usize {
    if data[at] == b'\r' && data.get(at + 1) == Some(&b'\n') {
        at + 2
    } else {
        at + 1
    }
}

/// Logical lines with their 1-based number (of their first physical line) in the text given:
/// line ends of any convention, `\`-continued lines joined, comments (from `#`) removed.
pub(crate) struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Lines {
            data,
            pos: 0,
            line: 0,
        }
    }

    /// Physical lines read so far (with the last one read).
    pub(crate) fn physical_lines(&self) -> u64 {
        self.line
    }

    /// Where in the text the next logical line starts (the text's length at its end).
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// The next physical line's text, comment cut off.
    fn physical(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.data.len() {
            return None;
        }
        let start = self.pos;
        let len = self.data.len();
        // One scan for the line end or a comment, whichever comes first (most lines have no
        // comment: one search, not two).
        let (text_end, next) = match memchr::memchr3(b'\n', b'\r', b'#', &self.data[start..]) {
            Some(i) if self.data[start + i] == b'#' => (
                start + i,
                terminator(self.data, start + i).map_or(len, |(_, end)| end),
            ),
            Some(i) => (start + i, past_terminator(self.data, start + i)),
            None => (len, len),
        };
        self.pos = next;
        self.line += 1;
        Some(&self.data[start..text_end])
    }
}

/// A physical line (without its line end) as it counts: a comment cut off.
#[inline]
fn content(line: &[u8]) -> &[u8] {
    match memchr::memchr(b'#', line) {
        Some(i) => &line[..i],
        None => line,
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, Cow<'a, [u8]>);
    fn next(&mut self) -> Option<Self::Item> {
        let first = self.physical()?;
        let number = self.line;
        let Some(first) = first.strip_suffix(b"\\") else {
            return Some((number, Cow::Borrowed(first)));
        };
        let mut joined = first.to_vec();
        joined.push(b' ');
        while let Some(next) = self.physical() {
            if let Some(body) = next.strip_suffix(b"\\") {
                joined.extend_from_slice(body);
                joined.push(b' ');
            } else {
                joined.extend_from_slice(next);
                break;
            }
        }
        Some((number, Cow::Owned(joined)))
    }
}

/// The first position at or after `at` where a logical line begins: 0, just past the line end
/// of a physical line that does not continue, or the end of `data`.
pub(crate) fn logical_boundary(data: &[u8], at: usize) -> usize {
    if at == 0 {
        return 0;
    }
    // The physical line holding byte `at - 1` (or starting right after it) is the first whose
    // end may be the boundary. When `at - 1` is the `\n` of a `\r\n`, that line ends at `at`.
    let mut from = at - 1;
    loop {
        let Some((found, end)) = terminator(data, from) else {
            return data.len();
        };
        // The line's text ends where its terminator begins, which for the `\n` of a `\r\n`
        // found first is one byte earlier.
        let text_end = if data[found] == b'\n' && found > 0 && data[found - 1] == b'\r' {
            found - 1
        } else {
            found
        };
        let start = memchr::memrchr2(b'\n', b'\r', &data[..text_end]).map_or(0, |i| i + 1);
        if !content(&data[start..text_end]).ends_with(b"\\") {
            return end;
        }
        from = end;
    }
}

/// Whitespace-separated tokens of a line.
pub(crate) struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Tokens { rest: line }
    }

    /// The text after the tokens taken so far.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

/// `u8::is_ascii_whitespace` as a table: one load a byte where the scan of a line runs.
const WHITESPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_whitespace();
        b += 1;
    }
    t
};

/// Whether `b` is ASCII whitespace (space, tab, line feed, form feed, carriage return).
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    WHITESPACE[b as usize]
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|&b| !is_space(b))?;
        let rest = &self.rest[start..];
        let end = rest.iter().position(|&b| is_space(b)).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8]) -> Vec<(u64, Vec<u8>)> {
        Lines::new(text).map(|(n, l)| (n, l.into_owned())).collect()
    }

    #[test]
    fn pieces_cut_at_boundaries_read_as_the_whole() {
        let texts: [&[u8]; 3] = [
            b"v 1 2 \\\r\n3\r\n# a \\\nf 1 \\ # c\n 2 \\\n\n3\\\nf 4 5 6\nlast \\",
            b"v 1 2 \\\r3\r# a \\\rf 1 \\ # c\r 2 \\\r\r3\\\rf 4 5 6\rlast \\\r",
            b"\r\r\na\r\n\n\rb \\\r\nc\r\r\n\\\rd\n\r",
        ];
        for text in texts {
            let whole = lines(text);
            for at in 0..=text.len() + 1 {
                let cut = logical_boundary(text, at);
                assert!(cut >= at.min(text.len()), "{at}: {cut}");
                let (a, b) = text.split_at(cut);
                assert!(
                    !(a.ends_with(b"\r") && b.starts_with(b"\n")),
                    "{at}: CRLF split"
                );
                let mut first = Lines::new(a);
                let mut joined: Vec<_> = first.by_ref().map(|(n, l)| (n, l.into_owned())).collect();
                let offset = first.physical_lines();
                joined.extend(lines(b).into_iter().map(|(n, l)| (n + offset, l)));
                assert_eq!(joined, whole, "cut at {cut} (asked {at})");
            }
        }
    }

    #[test]
    fn every_line_end_ends_a_line() {
        let numbered = |text: &[u8]| -> Vec<(u64, String)> {
            lines(text)
                .into_iter()
                .map(|(n, l)| (n, String::from_utf8(l).unwrap()))
                .collect()
        };
        let want = vec![
            (1, "a".to_string()),
            (2, "b".to_string()),
            (3, String::new()),
            (4, "c  d".to_string()),
            (6, "e".to_string()),
        ];
        assert_eq!(numbered(b"a\nb\n\nc \\\nd\ne\n"), want);
        assert_eq!(numbered(b"a\r\nb\r\n\r\nc \\\r\nd\r\ne\r\n"), want);
        assert_eq!(numbered(b"a\rb\r\rc \\\rd\re\r"), want);
        assert_eq!(numbered(b"a\rb\r\n\nc \\\rd\r\ne"), want);
    }

    #[test]
    fn a_byte_order_mark_starts_no_text() {
        assert_eq!(text_start(b"\xEF\xBB\xBFv 1 2 3\n"), 3);
        assert_eq!(text_start(b"v 1 2 3\n"), 0);
        assert_eq!(text_start(b"\xEF\xBB"), 0);
        assert_eq!(text_start(b""), 0);
    }

    #[test]
    fn continued_lines_are_not_cut() {
        let text = b"a \\\nb\nc\n";
        assert_eq!(logical_boundary(text, 1), 6);
        assert_eq!(logical_boundary(text, 4), 6);
        assert_eq!(logical_boundary(text, 6), 6);
        assert_eq!(logical_boundary(text, 7), 8);
    }
}
