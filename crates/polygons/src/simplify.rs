//! Watertight contour simplification (Ramer-Douglas-Peucker), one region at a time.
//!
//! Based on: U. Ramer, "An iterative procedure for the polygonal approximation of plane
//! curves", Computer Graphics and Image Processing 1, 1972, and D. H. Douglas and T. K.
//! Peucker, "Algorithms for the reduction of the number of points required to represent a
//! digitized line or its caricature", The Canadian Cartographer 10, 1973: keep a run's two
//! ends, then recursively the point farthest from the chord while it is farther than the
//! tolerance. Seed 001 (the ANavMG master thesis, 5.4) simplifies its reconstructed
//! floor-plan polygons the same way. How this departs: the run is a *section* of a contour,
//! not a whole contour; ties go to the smaller point; and simplified contours are checked and
//! repaired across all regions, as follows.
//!
//! A contour's vertices already mark every point where what lies across it changes, so a
//! border shared by two regions is the same run of points in both contours (reversed). Each
//! contour is cut into *sections* at those points. A section is simplified by a rule that
//! depends only on its points, not on its direction or on the region looking at it (the
//! farthest point wins; ties go to the smaller point), so both sides of a border keep the same
//! vertices and neighbouring polygons meet edge to edge, even though each region simplifies
//! its own copy.
//!
//! A contour whose neighbour never changes (an island, a hole with one thing around it) is cut
//! at two anchors chosen from its points alone: the smallest point and the point farthest
//! from it.
//!
//! Simplifying can make a contour cross itself, another contour of its region, or collapse.
//! Every region is checked (segments that cross or touch where they should not, contours with
//! fewer than three vertices or a flipped orientation); each offending simplified segment asks
//! for its farthest original point back. Requests are collected over all regions into a table
//! by section name ([`Restored`]), which every region applies, and the check runs again with
//! the grown table until nobody asks: rounds over all regions against a fixed table, so the
//! result depends neither on the order regions are visited in nor on how they are batched.
//! Original contours pass the check, so this ends.

use rustc_hash::FxHashMap as HashMap;

use crate::RegionContours;
use tessera_artifacts::Point;
use tessera_geom::predicates::{
    cross_properly, dist2, strictly_inside_segment, twice_area_of_edges,
};

/// One contour in terms of sections: `(section, reversed)` in order, and what lies across
/// each (the contour's neighbour code).
#[derive(Clone, Debug)]
pub(crate) struct ContourSections {
    pub parts: Vec<(u32, bool)>,
    pub across: Vec<u32>,
}

/// A run of contour points between two cut points (both included), in its canonical direction
/// (the smaller of the two point sequences), and its name: a hash of those points, the same in
/// every region that uses it.
#[derive(Clone, Debug)]
pub(crate) struct Section {
    pub points: Vec<Point>,
    pub keep: Vec<bool>,
    pub name: u128,
}

/// Points put back into sections by repairs: section name -> point positions, sorted. Shared
/// by all regions: a border simplified in one region is simplified the same in the other.
pub type Restored = HashMap<u128, Vec<u32>>;

/// A hash of what a region's polygons are made from besides the settings and the heightfield:
/// its id, its contours (points, heights, neighbours, level) and the points `restored` on its
/// sections.
pub(crate) fn input_hash(region: &RegionContours, restored: &Restored) -> u64 {
    // The words in one buffer, hashed at once: the digest of hashing them one by one.
    let mut b: Vec<u8> = Vec::with_capacity(
        16 + region
            .contours
            .iter()
            .map(|c| 12 + 16 * c.points.len())
            .sum::<usize>(),
    );
    let id = region.id;
    for v in [
        id.y as u32,
        id.x as u32,
        id.zmax,
        region.contours.len() as u32,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for c in &region.contours {
        b.extend_from_slice(&c.level.to_le_bytes());
        b.extend_from_slice(&(c.points.len() as u64).to_le_bytes());
        for (k, p) in c.points.iter().enumerate() {
            for v in [p.0 as u32, p.1 as u32, c.heights[k], c.neighbours[k]] {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    for name in section_names(region) {
        b.extend_from_slice(&name.to_le_bytes());
        let points = restored.get(&name).map_or(&[][..], |v| v.as_slice());
        b.extend_from_slice(&(points.len() as u64).to_le_bytes());
        for k in points {
            b.extend_from_slice(&k.to_le_bytes());
        }
    }
    xxhash_rust::xxh3::xxh3_64(&b)
}

/// The cut points of a contour: where what lies across it changes, or, when it never does,
/// its smallest point and the point farthest from it.
fn cuts_of(c: &tessera_artifacts::Contour) -> Vec<usize> {
    let n = c.points.len();
    let cuts: Vec<usize> = (0..n)
        .filter(|&k| c.neighbours[(k + n - 1) % n] != c.neighbours[k])
        .collect();
    if !cuts.is_empty() {
        return cuts;
    }
    let a = (0..n).min_by_key(|&k| c.points[k]).unwrap();
    let pa = c.points[a];
    let b = (0..n)
        .max_by(|&i, &j| {
            let (di, dj) = (dist2(pa, c.points[i]), dist2(pa, c.points[j]));
            di.cmp(&dj).then(c.points[j].cmp(&c.points[i]))
        })
        .unwrap();
    vec![a.min(b), a.max(b)]
}

/// One section of a contour: the run of `len` points from its cut at `start` to the next
/// cut, both included (round the whole contour when it has one cut), read backwards when
/// `reversed`: its canonical direction is the smaller of the run and its reverse.
struct Run {
    start: usize,
    len: usize,
    reversed: bool,
}

impl Run {
    /// The run's points of contour `c`, in its canonical direction.
    fn points<'a>(&'a self, c: &'a tessera_artifacts::Contour) -> impl Iterator<Item = Point> + 'a {
        (0..self.len).map(move |k| {
            let k = if self.reversed { self.len - 1 - k } else { k };
            c.points[(self.start + k) % c.points.len()]
        })
    }
}

/// The sections of contour `c` between its cuts ([`cuts_of`]), in order.
fn runs_of<'a>(
    c: &'a tessera_artifacts::Contour,
    cuts: &'a [usize],
) -> impl Iterator<Item = Run> + 'a {
    let n = c.points.len();
    (0..cuts.len()).map(move |i| {
        let (start, end) = (cuts[i], cuts[(i + 1) % cuts.len()]);
        let len = (end + n - start - 1) % n + 2;
        let at = |k: usize| c.points[(start + k) % n];
        let reversed = (0..len)
            .map(|k| at(len - 1 - k).cmp(&at(k)))
            .find(|o| o.is_ne())
            .is_some_and(|o| o.is_lt());
        Run {
            start,
            len,
            reversed,
        }
    })
}

/// The name of a section whose points, in its canonical direction, are `points`: a hash of
/// them (`buf` is scratch).
fn section_name(points: impl Iterator<Item = Point>, buf: &mut Vec<u8>) -> u128 {
    buf.clear();
    for p in points {
        buf.extend_from_slice(&p.0.to_le_bytes());
        buf.extend_from_slice(&p.1.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_128(buf)
}

/// The names of a region's sections, in the order [`sections_of`] lists them, without
/// building the sections.
pub(crate) fn section_names(region: &RegionContours) -> Vec<u128> {
    let mut names: Vec<u128> = Vec::new();
    let mut buf = Vec::new();
    for c in &region.contours {
        let cuts = cuts_of(c);
        for run in runs_of(c, &cuts) {
            let name = section_name(run.points(c), &mut buf);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Cuts one region's contours into sections (a section used twice by the region is stored
/// once).
pub(crate) fn sections_of(region: &RegionContours) -> (Vec<Section>, Vec<ContourSections>) {
    let mut sections: Vec<Section> = Vec::new();
    let mut by_name: HashMap<u128, u32> = HashMap::default();
    let contours = &region.contours;
    let mut out = Vec::with_capacity(contours.len());
    let mut buf = Vec::new();
    for c in contours {
        let cuts = cuts_of(c);
        let mut parts = Vec::with_capacity(cuts.len());
        let across = cuts.iter().map(|&k| c.neighbours[k]).collect();
        for run in runs_of(c, &cuts) {
            let key: Vec<Point> = run.points(c).collect();
            let name = section_name(key.iter().copied(), &mut buf);
            let id = *by_name.entry(name).or_insert_with(|| {
                let mut keep = vec![false; key.len()];
                keep[0] = true;
                *keep.last_mut().unwrap() = true;
                sections.push(Section {
                    points: key,
                    keep,
                    name,
                });
                sections.len() as u32 - 1
            });
            parts.push((id, run.reversed));
        }
        out.push(ContourSections { parts, across });
    }
    (sections, out)
}

/// Squared distance from `p` to segment `a..b`, in cells squared; `f64`, rounded (RDP
/// compares it with the squared tolerance, itself a float).
fn approx_segment_dist2(p: Point, a: Point, b: Point) -> f64 {
    let (ax, ay, bx, by) = (a.0 as f64, a.1 as f64, b.0 as f64, b.1 as f64);
    let (px, py) = (p.0 as f64, p.1 as f64);
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (qx, qy) = (ax + t * dx - px, ay + t * dy - py);
    qx * qx + qy * qy
}

/// The point strictly between `lo` and `hi` farthest from segment `lo..hi` (ties: the smaller
/// point), with its squared distance.
fn farthest(points: &[Point], lo: usize, hi: usize) -> Option<(usize, f64)> {
    let (a, b) = (points[lo], points[hi]);
    let mut best: Option<(usize, f64)> = None;
    for k in lo + 1..hi {
        let d = approx_segment_dist2(points[k], a, b);
        best = match best {
            Some((j, bd)) if bd > d || (bd == d && points[j] < points[k]) => Some((j, bd)),
            _ => Some((k, d)),
        };
    }
    best
}

/// Ramer-Douglas-Peucker on one section with tolerance `tol` (cells).
pub(crate) fn rdp(section: &mut Section, tol: f64) {
    let tol2 = tol * tol;
    let mut stack = vec![(0usize, section.points.len() - 1)];
    while let Some((lo, hi)) = stack.pop() {
        if let Some((k, d)) = farthest(&section.points, lo, hi) {
            if d > tol2 {
                section.keep[k] = true;
                stack.push((lo, k));
                stack.push((k, hi));
            }
        }
    }
}

/// A simplified segment of a region: its section and the positions of its ends there.
#[derive(Clone, Copy, Debug)]
struct Seg {
    a: Point,
    b: Point,
    section: u32,
    lo: usize,
    hi: usize,
}

/// The simplified contours of a region as segments, plus each contour's vertex count and twice
/// its area (for collapse and orientation checks).
fn segments(sections: &[Section], contours: &[ContourSections]) -> (Vec<Seg>, Vec<(usize, i64)>) {
    let mut segs = Vec::new();
    let mut shapes = Vec::new();
    for c in contours {
        let first = segs.len();
        for &(s, reversed) in &c.parts {
            let sec = &sections[s as usize];
            let kept: Vec<usize> = (0..sec.points.len()).filter(|&k| sec.keep[k]).collect();
            for w in kept.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                let (a, b) = if reversed {
                    (sec.points[hi], sec.points[lo])
                } else {
                    (sec.points[lo], sec.points[hi])
                };
                segs.push(Seg {
                    a,
                    b,
                    section: s,
                    lo,
                    hi,
                });
            }
        }
        let twice = twice_area_of_edges(segs[first..].iter().map(|s| (s.a, s.b)));
        shapes.push((segs.len() - first, twice));
    }
    (segs, shapes)
}

/// Two segments that a triangulation could not take together: a proper crossing, an end of
/// one lying inside the other (which covers collinear overlaps), or the same two ends (a thin
/// hole or strip whose two sides simplified onto one line: the triangulation would keep one
/// edge where the inside test needs two, and lose the region beyond it).
fn conflict(s: &Seg, t: &Seg) -> bool {
    (s.a, s.b) == (t.a, t.b)
        || (s.a, s.b) == (t.b, t.a)
        || strictly_inside_segment(t.a, s.a, s.b)
        || strictly_inside_segment(t.b, s.a, s.b)
        || strictly_inside_segment(s.a, t.a, t.b)
        || strictly_inside_segment(s.b, t.a, t.b)
        || cross_properly(s.a, s.b, t.a, t.b)
}

/// The simplified segments of one region that must get a vertex back.
fn offenders(sections: &[Section], contours: &[ContourSections], outer: &[bool]) -> Vec<Seg> {
    let (segs, shapes) = segments(sections, contours);
    let mut bad = vec![false; segs.len()];
    // Collapsed or flipped contours: every segment of it.
    let mut start = 0;
    for (ci, &(count, twice)) in shapes.iter().enumerate() {
        let ok = count >= 3 && if outer[ci] { twice > 0 } else { twice < 0 };
        if !ok {
            bad[start..start + count].iter_mut().for_each(|b| *b = true);
        }
        start += count;
    }
    // Conflicting pairs, by a sweep over x.
    let mut order: Vec<usize> = (0..segs.len()).collect();
    let min_x = |s: &Seg| s.a.0.min(s.b.0);
    order.sort_by_key(|&i| min_x(&segs[i]));
    for (k, &i) in order.iter().enumerate() {
        let s = &segs[i];
        let max_x = s.a.0.max(s.b.0);
        let (y0, y1) = (s.a.1.min(s.b.1), s.a.1.max(s.b.1));
        for &j in &order[k + 1..] {
            let t = &segs[j];
            if min_x(t) > max_x {
                break;
            }
            if t.a.1.max(t.b.1) < y0 || t.a.1.min(t.b.1) > y1 {
                continue;
            }
            if conflict(s, t) {
                bad[i] = true;
                bad[j] = true;
            }
        }
    }
    segs.into_iter()
        .zip(bad)
        .filter_map(|(s, b)| b.then_some(s))
        .collect()
}

/// Simplifies a region's sections with tolerance `tol` (cells; 0 keeps every vertex) and puts
/// back the points `restored` names.
pub(crate) fn simplify(sections: &mut [Section], tol: f64, restored: &Restored) {
    for s in sections.iter_mut() {
        if tol <= 0.0 {
            s.keep.iter_mut().for_each(|k| *k = true);
            continue;
        }
        rdp(s, tol);
        for &k in restored.get(&s.name).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(keep) = s.keep.get_mut(k as usize) {
                *keep = true;
            }
        }
    }
}

/// The points a region needs back (section name, position) so that its simplified contours are
/// simple, correctly oriented and apart: for each offending segment, its farthest original
/// point. Empty when the region is clean. Original contours are clean, so repeating
/// [`simplify`] and this until nothing is asked for ends.
pub(crate) fn repairs(
    sections: &[Section],
    contours: &[ContourSections],
    outer: &[bool],
) -> Vec<(u128, u32)> {
    let mut fixes: Vec<(u128, u32)> = offenders(sections, contours, outer)
        .into_iter()
        .filter_map(|seg| {
            let sec = &sections[seg.section as usize];
            farthest(&sec.points, seg.lo, seg.hi)
                .filter(|&(k, _)| !sec.keep[k])
                .map(|(k, _)| (sec.name, k as u32))
        })
        .collect();
    fixes.sort_unstable();
    fixes.dedup();
    fixes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(points: &[Point]) -> Section {
        let mut keep = vec![false; points.len()];
        keep[0] = true;
        *keep.last_mut().unwrap() = true;
        Section {
            points: points.to_vec(),
            keep,
            name: 0,
        }
    }

    /// Random contours: runs of any length, cut at every change of what lies across, at one
    /// change only, or (one neighbour all round) at two anchors; palindromic runs included.
    fn random_region(seed: u64) -> RegionContours {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let contours = (0..1 + next(4))
            .map(|_| {
                let n = 1 + next(12) as usize;
                let kinds = 1 + next(3);
                let mut points: Vec<Point> = (0..n)
                    .map(|_| (next(5) as i32 - 2, next(5) as i32 - 2))
                    .collect();
                if next(4) == 0 {
                    // Symmetric: the run read backwards is the run.
                    for k in 0..n / 2 {
                        points[n - 1 - k] = points[k];
                    }
                }
                tessera_artifacts::Contour {
                    tile: tessera_artifacts::TileCoord { x: 0, y: 0 },
                    region: 0,
                    level: 0,
                    heights: vec![0; n],
                    neighbours: (0..n).map(|_| next(kinds) as u32).collect(),
                    points,
                }
            })
            .collect();
        RegionContours {
            id: tessera_artifacts::SpanKey::default(),
            contours,
        }
    }

    #[test]
    fn section_names_are_the_names_of_the_sections() {
        for seed in 0..2000 {
            let region = random_region(seed);
            let (sections, _) = sections_of(&region);
            let names: Vec<u128> = sections.iter().map(|s| s.name).collect();
            assert_eq!(section_names(&region), names, "seed {seed}");
            // A name is the hash of the section's points, as it always was: tables and keys
            // of earlier bakes stay valid.
            for s in &sections {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                for p in &s.points {
                    h.update(&p.0.to_le_bytes());
                    h.update(&p.1.to_le_bytes());
                }
                assert_eq!(h.digest128(), s.name, "seed {seed}");
            }
        }
    }

    #[test]
    fn rdp_keeps_what_deviates_and_is_direction_free() {
        // A staircase from (0,0) to (6,6) plus one spike.
        let pts = [
            (0, 0),
            (1, 0),
            (1, 1),
            (2, 1),
            (2, 2),
            (3, 2),
            (3, 6),
            (4, 6),
            (6, 6),
        ];
        let mut s = section(&pts);
        rdp(&mut s, 1.0);
        let kept: Vec<Point> = (0..pts.len())
            .filter(|&k| s.keep[k])
            .map(|k| pts[k])
            .collect();
        assert!(kept.contains(&(3, 2)) && kept.contains(&(3, 6)));
        let mut rev: Vec<Point> = pts.to_vec();
        rev.reverse();
        let mut r = section(&rev);
        rdp(&mut r, 1.0);
        let mut kept_rev: Vec<Point> = (0..rev.len())
            .filter(|&k| r.keep[k])
            .map(|k| rev[k])
            .collect();
        kept_rev.reverse();
        assert_eq!(kept, kept_rev);
        // Zero tolerance keeps everything that deviates at all.
        let mut z = section(&pts);
        rdp(&mut z, 0.0);
        assert!(z.keep[1..pts.len() - 1].iter().filter(|k| **k).count() >= 6);
    }

    #[test]
    fn conflicts_are_crossings_and_touches_not_shared_ends() {
        let seg = |a, b| Seg {
            a,
            b,
            section: 0,
            lo: 0,
            hi: 1,
        };
        assert!(conflict(&seg((0, 0), (4, 4)), &seg((0, 4), (4, 0))));
        assert!(conflict(&seg((0, 0), (4, 0)), &seg((2, 0), (2, 3))));
        assert!(conflict(&seg((0, 0), (4, 0)), &seg((2, 0), (6, 0))));
        assert!(!conflict(&seg((0, 0), (4, 0)), &seg((4, 0), (4, 3))));
        assert!(!conflict(&seg((0, 0), (4, 0)), &seg((0, 1), (4, 1))));
        // The same two ends, either way round: a strip collapsed onto one line.
        assert!(conflict(&seg((0, 0), (4, 3)), &seg((4, 3), (0, 0))));
        assert!(conflict(&seg((0, 0), (4, 3)), &seg((0, 0), (4, 3))));
    }
}
