//! OBJ text as logical lines and tokens, and the places where it may be cut into windows.
//!
//! A physical line ends at `\n`; a trailing `\r` is dropped and a comment (from `#`) cut off.
//! A physical line whose remaining text ends with `\` continues on the next one: together they
//! make one logical line. Whether a physical line continues depends on that line alone, so the
//! text can be cut after any newline that ends a line which does not continue
//! ([`logical_boundary`]), and the pieces read alone give the same logical lines.

use std::borrow::Cow;

/// Logical lines with their 1-based number (of their first physical line) in the text given:
/// CR stripped, `\`-continued lines joined, comments (from `#`) removed.
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

    /// The next physical line's text, comment cut off.
    fn physical(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        self.pos += (end + 1).min(rest.len());
        self.line += 1;
        Some(content(&rest[..end]))
    }
}

/// A physical line (without its `\n`) as it counts: a trailing CR dropped, a comment cut off.
#[inline]
fn content(mut line: &[u8]) -> &[u8] {
    if let [head @ .., b'\r'] = line {
        line = head;
    }
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

/// The first position at or after `at` where a logical line begins: 0, just past a newline
/// ending a physical line that does not continue, or the end of `data`.
pub(crate) fn logical_boundary(data: &[u8], at: usize) -> usize {
    if at == 0 {
        return 0;
    }
    // The physical line holding byte `at - 1` (or starting right after it) is the first whose
    // end may be the boundary.
    let mut from = at - 1;
    loop {
        let Some(newline) = memchr::memchr(b'\n', data.get(from..).unwrap_or(&[])) else {
            return data.len();
        };
        let newline = from + newline;
        let start = memchr::memrchr(b'\n', &data[..newline]).map_or(0, |i| i + 1);
        if !content(&data[start..newline]).ends_with(b"\\") {
            return newline + 1;
        }
        from = newline + 1;
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
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &self.rest[start..];
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
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
        let text: &[u8] = b"v 1 2 \\\r\n3\r\n# a \\\nf 1 \\ # c\n 2 \\\n\n3\\\nf 4 5 6\nlast \\";
        let whole = lines(text);
        for at in 0..=text.len() + 1 {
            let cut = logical_boundary(text, at);
            assert!(cut >= at.min(text.len()), "{at}: {cut}");
            let (a, b) = text.split_at(cut);
            let mut joined = lines(a);
            let offset = a.iter().filter(|&&c| c == b'\n').count() as u64;
            joined.extend(lines(b).into_iter().map(|(n, l)| (n + offset, l)));
            assert_eq!(joined, whole, "cut at {cut} (asked {at})");
        }
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
