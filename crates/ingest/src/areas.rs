//! Areas by scene names: each triangle gets a small area id from the names the scene gives it
//! (OBJ `usemtl`, `g` and `o`; glTF material, mesh, node and the node's ancestors).
//!
//! A rule is a list of glob patterns: `*` matches any run of characters (the empty one too),
//! `?` exactly one character, anything else itself (case-sensitive); a pattern matches a whole
//! name, not a part of it. A triangle takes the first rule one of whose patterns matches any of
//! its names: area id = rule index + 1; 0 (`default`) when none does.
//!
//! The first rule matching any of a set of names is the earliest of the first rules matching
//! each name ([`AreaRules::earlier`]), so readers cache the result per name ([`AreaMemo`]) and
//! combine: a file's few distinct names are matched once each, however many triangles share
//! them.

use std::collections::HashMap;
use std::sync::Arc;

/// The area rules of a bake, in order of precedence. The default has no rule: every triangle
/// is area 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AreaRules {
    /// Each rule's patterns.
    rules: Arc<Vec<Vec<Box<[u8]>>>>,
    key: u64,
}

impl AreaRules {
    /// The most rules: area ids are bytes, and 0 is no rule.
    pub const MAX_RULES: usize = u8::MAX as usize;

    /// Rule `i` is `rules[i]`'s patterns (any of them), area id `i + 1`.
    ///
    /// Panics with more than [`AreaRules::MAX_RULES`] rules (the config allows far fewer).
    pub fn new(rules: Vec<Vec<String>>) -> AreaRules {
        assert!(
            rules.len() <= AreaRules::MAX_RULES,
            "{} area rules, at most {} fit in a byte",
            rules.len(),
            AreaRules::MAX_RULES
        );
        let rules: Vec<Vec<Box<[u8]>>> = rules
            .into_iter()
            .map(|r| r.into_iter().map(|p| p.into_bytes().into()).collect())
            .collect();
        let key = if rules.is_empty() {
            0
        } else {
            // Length-prefixed: no two different rule lists encode the same bytes.
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            h.update(b"TSAREAS\0");
            h.update(&(rules.len() as u64).to_le_bytes());
            for r in &rules {
                h.update(&(r.len() as u64).to_le_bytes());
                for p in r {
                    h.update(&(p.len() as u64).to_le_bytes());
                    h.update(p);
                }
            }
            h.digest()
        };
        AreaRules {
            rules: Arc::new(rules),
            key,
        }
    }

    /// Whether there is no rule (every triangle area 0): readers then look at no name.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// A hash of the rules (xxh3 of their patterns, length-prefixed, in order); 0 for none.
    /// Part of a scene cache's key: a cache made with other rules is made again.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The area of a triangle with `names`: the id of the first rule one of whose patterns
    /// matches one of them, 0 when none does.
    pub fn area_of(&self, names: &[&[u8]]) -> u8 {
        names.iter().fold(0, |area, name| {
            AreaRules::earlier(area, self.first_rule(name))
        })
    }

    /// The area of a triangle whose only name is `name`.
    pub fn first_rule(&self, name: &[u8]) -> u8 {
        self.rules
            .iter()
            .position(|patterns| patterns.iter().any(|p| glob(p, name)))
            .map_or(0, |i| (i + 1) as u8)
    }

    /// The area of names some of which have area `a` and the others `b`: the earlier rule of
    /// the two, 0 (no rule) counting last.
    pub fn earlier(a: u8, b: u8) -> u8 {
        match (a, b) {
            (0, b) => b,
            (a, 0) => a,
            (a, b) => a.min(b),
        }
    }
}

/// [`AreaRules::first_rule`] with its results kept per name, for one reader thread.
pub(crate) struct AreaMemo<'r> {
    rules: &'r AreaRules,
    seen: HashMap<Box<[u8]>, u8>,
}

impl<'r> AreaMemo<'r> {
    /// Names kept at most: a file of millions of distinct names keeps a bounded memo.
    const MAX_NAMES: usize = 4096;

    pub(crate) fn new(rules: &'r AreaRules) -> AreaMemo<'r> {
        AreaMemo {
            rules,
            seen: HashMap::new(),
        }
    }

    pub(crate) fn rules(&self) -> &'r AreaRules {
        self.rules
    }

    pub(crate) fn first_rule(&mut self, name: &[u8]) -> u8 {
        if self.rules.is_empty() {
            return 0;
        }
        if let Some(&area) = self.seen.get(name) {
            return area;
        }
        let area = self.rules.first_rule(name);
        if self.seen.len() >= AreaMemo::MAX_NAMES {
            self.seen.clear();
        }
        self.seen.insert(name.into(), area);
        area
    }
}

/// Bytes of the UTF-8 character that starts with `b` (1 for a byte that starts none: names
/// are bytes, and need not be UTF-8).
fn char_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Whether the glob `pattern` matches all of `name`: `*` any run of characters, `?` one
/// character, other bytes themselves. Greedy with a return to the last `*`, which is exact
/// for these two wildcards and takes at most `pattern.len() * name.len()` steps.
pub fn glob(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // Just past the last `*`, and where in the name it took its characters from.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, n));
                p += 1;
            }
            Some(b'?') => {
                p += 1;
                n = (n + char_len(name[n])).min(name.len());
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                // The last `*` takes one more character.
                Some((after, from)) => {
                    let from = (from + char_len(name[from])).min(name.len());
                    star = Some((after, from));
                    (p, n) = (after, from);
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        let cases: &[(&str, &str, bool)] = &[
            ("road", "road", true),
            ("road", "Road", false),
            ("road", "roads", false),
            ("road*", "road_1", true),
            ("road*", "road", true),
            ("road*", "myroad", false),
            ("*road", "myroad", true),
            ("*road", "road_1", false),
            ("*road*", "a_road_b", true),
            ("*", "", true),
            ("*", "anything", true),
            ("**", "", true),
            ("?", "", false),
            ("", "", true),
            ("", "a", false),
            ("a", "", false),
            ("?", "a", true),
            ("?", "ab", false),
            ("??", "ab", true),
            ("r?ad", "road", true),
            ("r?ad", "rad", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "aXbY", false),
            ("a*b?", "abbb", true),
            ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("é?", "éa", true),
            ("?", "é", true),
            ("??", "é", false),
            ("*?", "é", true),
            ("*??", "é", false),
            ("x*", "x\u{1F600}", true),
            ("[a]", "a", false),
            ("[a]", "[a]", true),
        ];
        for &(pattern, name, want) in cases {
            assert_eq!(
                glob(pattern.as_bytes(), name.as_bytes()),
                want,
                "{pattern:?} on {name:?}"
            );
        }
        // Bytes that are not UTF-8 match themselves and never panic.
        assert!(glob(b"?\xff", b"a\xff"));
        assert!(glob(b"*", b"\xe0"));
        assert!(!glob(b"??", b"\xe0"));
    }

    fn rules(r: &[&[&str]]) -> AreaRules {
        AreaRules::new(
            r.iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect(),
        )
    }

    #[test]
    fn the_first_rule_matching_any_name_wins() {
        let r = rules(&[&["Water*"], &["road*", "street"], &["*"]]);
        assert_eq!(r.area_of(&[b"Water_deep"]), 1);
        assert_eq!(r.area_of(&[b"street", b"Water"]), 1);
        assert_eq!(r.area_of(&[b"myroad", b"street"]), 2);
        assert_eq!(r.area_of(&[b"grass"]), 3);
        assert_eq!(r.area_of(&[]), 0, "no name, no rule");
        let r = rules(&[&["Water*"], &["road*"]]);
        assert_eq!(r.area_of(&[b"grass", b"myroad"]), 0);
        assert_eq!(AreaRules::default().area_of(&[b"Water"]), 0);
        let mut memo = AreaMemo::new(&r);
        for _ in 0..2 {
            assert_eq!(memo.first_rule(b"road_2"), 2);
            assert_eq!(memo.first_rule(b"grass"), 0);
        }
        assert_eq!(AreaRules::earlier(0, 3), 3);
        assert_eq!(AreaRules::earlier(2, 0), 2);
        assert_eq!(AreaRules::earlier(4, 3), 3);
    }

    #[test]
    fn keys_name_the_rules() {
        assert_eq!(AreaRules::default().key(), 0);
        assert_eq!(rules(&[]).key(), 0);
        let a = rules(&[&["a", "b"]]);
        assert_ne!(a.key(), 0);
        assert_eq!(a.key(), rules(&[&["a", "b"]]).key());
        for other in [
            rules(&[&["a"], &["b"]]),
            rules(&[&["ab"]]),
            rules(&[&["b", "a"]]),
            rules(&[&["a", "b"], &[]]),
        ] {
            assert_ne!(a.key(), other.key(), "{other:?}");
        }
    }
}
