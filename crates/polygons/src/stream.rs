//! Every region through polygonization: rounds of simplify-and-check over all regions until
//! the shared table of restored points stops growing (see [`crate::simplify`]), then each
//! window's regions polygonized in parallel ([`crate::region`]), detailed when asked
//! ([`crate::detail`]), counted and handed on in region order.

use rayon::prelude::*;
use std::sync::atomic::Ordering;

use crate::region::polygonize_region;
use crate::{
    detail, simplify, FirstRound, MeshInput, PolygonError, PolygonParams, PolygonStats,
    RegionContours, RegionOutput, RegionSource, Reuse, Sealed, Served,
};
use tessera_artifacts::SpanKey;

/// The points a round of simplification asked back: `(section name, point index)`, sorted,
/// each once.
pub type Asked = Vec<(u128, u32)>;

/// The asks of several parts as one: sorted, each once (what a `share` of
/// [`polygonize_stream_shared`] gives back).
pub fn merge_asked(parts: impl IntoIterator<Item = Asked>) -> Asked {
    let mut all: Asked = parts.into_iter().flatten().collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Polygonizes every region of `source`, handing each region's polygons to `sink` in region
/// order. Regions of a window are worked on in parallel (rayon); memory is what a window and
/// its polygons take, plus the table of restored points and a fingerprint of every region's
/// section names (four bytes a section).
/// With `height` (the heightfield, see [`detail::HeightAt`]) polygons get height detail.
pub fn polygonize_stream(
    source: &mut dyn RegionSource,
    params: PolygonParams,
    height: Option<&detail::HeightAt>,
    sink: &mut dyn FnMut(RegionOutput) -> Result<(), PolygonError>,
) -> Result<PolygonStats, PolygonError> {
    polygonize_stream_shared(source, params, height, &mut |_, asked| Ok(asked), sink)
}

/// [`polygonize_stream`] over one part of the regions, the others being polygonized elsewhere
/// (other processes of a distributed bake) by the same rounds: after each round of
/// simplification, `share(round, asked)` gives back what every part asked in that round
/// (sorted, each once), the parts' asks merged. A section shared by regions of two parts then
/// gets the same points back in both, and every part applies the same table: each region's
/// polygons are those of polygonizing all regions at once. With `share` giving back its own
/// argument this is [`polygonize_stream`].
pub fn polygonize_stream_shared(
    source: &mut dyn RegionSource,
    params: PolygonParams,
    height: Option<&detail::HeightAt>,
    share: &mut dyn FnMut(u32, Asked) -> Result<Asked, PolygonError>,
    sink: &mut dyn FnMut(RegionOutput) -> Result<(), PolygonError>,
) -> Result<PolygonStats, PolygonError> {
    polygonize_stream_reusing(source, params, height, share, None, sink)
}

/// [`polygonize_stream_shared`] taking, through `reuse`, each region's polygons from an
/// earlier run when they were made under the same key ([`Reuse`]): the rounds of
/// simplification still run (the points restored on a region's sections may come from its
/// neighbours), though a region whose contours' key ([`RegionSource::contour_keys`]) an
/// earlier run kept a first round for is not read in the first round; then, with the
/// source's contour keys, a region kept under its key is handed on as kept without being
/// read, its height detail included, and the others are polygonized. Each output carries its
/// key (without contour keys every region is polygonized and keyed).
pub fn polygonize_stream_reusing(
    source: &mut dyn RegionSource,
    params: PolygonParams,
    height: Option<&detail::HeightAt>,
    share: &mut dyn FnMut(u32, Asked) -> Result<Asked, PolygonError>,
    reuse: Option<&dyn Reuse>,
    sink: &mut dyn FnMut(RegionOutput) -> Result<(), PolygonError>,
) -> Result<PolygonStats, PolygonError> {
    // Rounds of simplify-and-check until no region asks for a point back. A region whose
    // sections got no point back in the last round simplifies as it did then and asks for
    // what it asked then, all of it in the table already: after the first round only the
    // regions touching a grown section are checked again.
    let mut restored = simplify::Restored::default();
    let mut stats = PolygonStats::default();
    // A raised stop flag skips the regions not yet started and ends the stream after the
    // window: an interrupted bake waits for the regions under way, not for a whole window.
    let flag = source.stop_flag();
    let stopped = || flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
    let check = || {
        if stopped() {
            Err(PolygonError::Stopped)
        } else {
            Ok(())
        }
    };
    // Every region's section names, from the first round: a later round reads back only the
    // regions that may touch a grown section, and a region's input names the points restored
    // on them.
    let mut marks = SectionMarks::default();
    if params.max_error > 0.0 {
        let mut grown: Option<rustc_hash::FxHashSet<u128>> = None;
        // First rounds an earlier run kept, by the source's keys of the regions' contours:
        // those regions are not read in the first round.
        let memo: Option<Memo> = match (reuse, source.contour_keys()) {
            (Some(reuse), Some(keys)) => {
                let keys = keys.to_vec();
                let got = keys
                    .par_iter()
                    .map(|&(id, key)| reuse.first_round(id, key))
                    .collect();
                Some((keys, got))
            }
            _ => None,
        };
        let kept_first = |id: SpanKey| {
            memo.as_ref().and_then(|(keys, got)| {
                let i = keys.binary_search_by_key(&id, |k| k.0).ok()?;
                got[i].as_ref()
            })
        };
        let mut round = 0;
        loop {
            let mut asked: Vec<(u128, u32)> = Vec::new();
            // The first round's results of the regions read, in region order.
            let mut made: Vec<(SpanKey, FirstRound)> = Vec::new();
            // After the first round: the grown sections' fingerprints, by which a region is
            // left alone without being cut into sections (and a source that can, without
            // being read).
            let prints: Option<rustc_hash::FxHashSet<u32>> = grown
                .as_ref()
                .map(|names| names.iter().map(|&n| fingerprint(n)).collect());
            let wanted = |id: SpanKey| match &prints {
                None => kept_first(id).is_none(),
                Some(p) => marks.may_touch(id, p),
            };
            let mut per_window = |window: &[RegionContours]| -> Result<(), PolygonError> {
                let fixes: Vec<Option<FirstRound>> = largest_first(window, |region| {
                    if stopped() || !wanted(region.id) {
                        return None;
                    }
                    let (mut sections, contours) = simplify::sections_of(region);
                    let prints = match &grown {
                        Some(grown) => {
                            if !sections.iter().any(|s| grown.contains(&s.name)) {
                                return None;
                            }
                            Vec::new()
                        }
                        None => sections.iter().map(|s| fingerprint(s.name)).collect(),
                    };
                    simplify::simplify(&mut sections, params.max_error, &restored);
                    let outer: Vec<bool> = region.contours.iter().map(|c| c.is_outer()).collect();
                    let asked = simplify::repairs(&sections, &contours, &outer);
                    Some(FirstRound { asked, prints })
                });
                check()?;
                for (region, fixes) in window.iter().zip(fixes) {
                    let Some(fixes) = fixes else { continue };
                    asked.extend(fixes.asked.iter().copied());
                    if grown.is_none() {
                        made.push((region.id, fixes));
                    }
                }
                Ok(())
            };
            source.for_each_window_of(&wanted, &mut per_window)?;
            if grown.is_none() {
                marks = first_marks(made, memo.as_ref(), reuse, &mut asked)?;
            }
            asked.sort_unstable();
            asked.dedup();
            let asked = share(round, asked)?;
            round += 1;
            let mut names = rustc_hash::FxHashSet::default();
            for (name, k) in asked {
                let list = restored.entry(name).or_default();
                if let Err(at) = list.binary_search(&k) {
                    list.insert(at, k);
                    stats.restored_vertices += 1;
                    names.insert(name);
                }
            }
            if names.is_empty() {
                break;
            }
            grown = Some(names);
        }
    }
    // The polygons, with the final table. A window's polygons are handed on while the next
    // window is polygonized on the pool (the hand-over runs on this thread alone).
    let height = height.filter(|_| params.detail.is_on());
    let mut hand_on = |outs: Vec<RegionOutput>| -> Result<(), PolygonError> {
        for out in outs {
            stats.regions += 1;
            stats.polygons += out.polys.len() as u64;
            stats.triangles += out.polys.iter().map(|p| p.tris.len() as u64).sum::<u64>();
            stats.notches += out.notches;
            stats.by_notches.add(out.notches, out.polys.len() as u64);
            stats.contour_vertices += out.contour_vertices;
            stats.simplified_vertices += out.simplified_vertices;
            stats.partition_fallbacks += u64::from(out.fell_back);
            stats.detail_points += out.detail.len() as u64;
            stats.reused_regions += u64::from(out.reused);
            sink(out)?;
        }
        Ok(())
    };
    let mut pending: Option<Vec<RegionOutput>> = None;
    match (reuse, source.contour_keys()) {
        // Each region's input from its contours' key: a region whose polygons an earlier run
        // kept under the same key is taken without being read.
        (Some(reuse), Some(keys)) => {
            let inputs = Inputs::of(keys, &marks, &restored);
            let take = |id: SpanKey| reuse.kept_record(id, inputs.of_region(id)?);
            source.for_each_window_taking(&take, &mut |window| {
                let make = || {
                    let (mut read, mut kept) = (Vec::new(), Vec::new());
                    for served in window {
                        match served {
                            Served::Read(region) => read.push(region),
                            Served::Kept(id, sealed) => kept.push((id, sealed)),
                        }
                    }
                    let kept: Vec<RegionOutput> = kept
                        .into_par_iter()
                        .map(|(id, sealed)| unsealed(reuse, id, sealed))
                        .collect::<Result<_, _>>()?;
                    let made = polygons_of_window(
                        &read,
                        |region| {
                            check()?;
                            let input = inputs
                                .of_region(region.id)
                                .unwrap_or_else(|| simplify::input_hash(region, &restored));
                            made_under(reuse, region, input, params, &restored)
                        },
                        height.map(|h| (&params.detail, h)),
                        Some(reuse),
                    )?;
                    // Back in region order (a window is in id order).
                    let mut outs = kept;
                    outs.extend(made);
                    outs.sort_unstable_by_key(|o| o.id);
                    Ok(sealed_all(Some(reuse), outs))
                };
                next_window(&mut pending, make, &mut hand_on)?;
                check()
            })?;
        }
        _ => source.for_each_window(&mut |window| {
            let make = || {
                let outs = polygons_of_window(
                    window,
                    |region| {
                        check()?;
                        match reuse {
                            Some(reuse) => {
                                let input = simplify::input_hash(region, &restored);
                                made_under(reuse, region, input, params, &restored)
                            }
                            None => polygonize_region(region, params, &restored),
                        }
                    },
                    height.map(|h| (&params.detail, h)),
                    reuse,
                )?;
                Ok(sealed_all(reuse, outs))
            };
            next_window(&mut pending, make, &mut hand_on)?;
            check()
        })?,
    }
    if let Some(outs) = pending {
        hand_on(outs)?;
    }
    Ok(stats)
}

/// Makes one window's outputs on the pool (`make`) while the last window's (`pending`) are
/// handed on on this thread; the new ones are then pending.
fn next_window(
    pending: &mut Option<Vec<RegionOutput>>,
    make: impl FnOnce() -> Result<Vec<RegionOutput>, PolygonError> + Send,
    hand_on: &mut dyn FnMut(Vec<RegionOutput>) -> Result<(), PolygonError>,
) -> Result<(), PolygonError> {
    let mut made = None;
    let handed = rayon::in_place_scope(|scope| {
        let made = &mut made;
        scope.spawn(move |_| *made = Some(make()));
        pending.take().map_or(Ok(()), hand_on)
    });
    handed?;
    *pending = Some(made.expect("the window was polygonized")?);
    Ok(())
}

/// Region `region` polygonized, with its key under `reuse` (from `input`).
fn made_under(
    reuse: &dyn Reuse,
    region: &RegionContours,
    input: u64,
    params: PolygonParams,
    restored: &simplify::Restored,
) -> Result<RegionOutput, PolygonError> {
    let out = polygonize_region(region, params, restored)?;
    Ok(RegionOutput {
        key: reuse.key(input, out.extent),
        ..out
    })
}

/// A kept record of region `id` read back, as taken.
fn unsealed(reuse: &dyn Reuse, id: SpanKey, sealed: Sealed) -> Result<RegionOutput, PolygonError> {
    let kept = |what: String| {
        PolygonError::Source(format!(
            "the kept polygons of the region at cell ({}, {}), height {}: {what}",
            id.x, id.y, id.zmax
        ))
    };
    let out = reuse.unseal(&sealed).map_err(kept)?;
    if out.id != id {
        return Err(kept(format!(
            "the record is of the region at cell ({}, {}), height {}",
            out.id.x, out.id.y, out.id.zmax
        )));
    }
    Ok(RegionOutput {
        reused: true,
        sealed: Some(sealed),
        ..out
    })
}

/// `outs` with every new output's record made, in parallel (height detail done).
fn sealed_all(reuse: Option<&dyn Reuse>, mut outs: Vec<RegionOutput>) -> Vec<RegionOutput> {
    if let Some(reuse) = reuse {
        outs.par_iter_mut()
            .filter(|o| o.sealed.is_none())
            .for_each(|o| o.sealed = reuse.seal(o));
    }
    outs
}

/// Every region's input ([`Reuse`]) when the source knows its contours' keys: a hash of the
/// key and of the points restored on the region's sections, found by the fingerprints of
/// their names the first round recorded (every name of a fingerprint is read: the input
/// follows the contours and the table, as a hash of them all would). None for a region the
/// first round did not record while points were restored: it is read, and its input made
/// from its contours.
struct Inputs(Vec<(SpanKey, Option<u64>)>);

impl Inputs {
    fn of(keys: &[(SpanKey, u64)], marks: &SectionMarks, restored: &simplify::Restored) -> Inputs {
        let mut by_print: rustc_hash::FxHashMap<u32, Vec<(u128, &[u32])>> = Default::default();
        for (&name, points) in restored {
            by_print
                .entry(fingerprint(name))
                .or_default()
                .push((name, points));
        }
        by_print
            .values_mut()
            .for_each(|names| names.sort_unstable_by_key(|n| n.0));
        let inputs = keys
            .par_iter()
            .map(|&(id, key)| {
                let prints = match marks.prints_of(id) {
                    Some(prints) => prints,
                    None if restored.is_empty() => &[],
                    None => return (id, None),
                };
                let mut b = Vec::with_capacity(8);
                b.extend_from_slice(&key.to_le_bytes());
                for print in prints {
                    for (name, points) in by_print.get(print).into_iter().flatten() {
                        b.extend_from_slice(&name.to_le_bytes());
                        b.extend_from_slice(&(points.len() as u64).to_le_bytes());
                        points
                            .iter()
                            .for_each(|k| b.extend_from_slice(&k.to_le_bytes()));
                    }
                }
                (id, Some(xxhash_rust::xxh3::xxh3_64(&b)))
            })
            .collect();
        Inputs(inputs)
    }

    /// The input of region `id` (None: not listed by the source, or not known).
    fn of_region(&self, id: SpanKey) -> Option<u64> {
        let i = self.0.binary_search_by_key(&id, |k| k.0).ok()?;
        self.0[i].1
    }
}

/// The section names of every region seen, as fingerprints: `prints[starts[i].1..]` up to
/// the next region's are those of region `starts[i].0`, in region order. Four bytes a
/// section, and an id and a word a region.
#[derive(Default)]
struct SectionMarks {
    starts: Vec<(SpanKey, usize)>,
    prints: Vec<u32>,
}

impl SectionMarks {
    fn push(&mut self, id: SpanKey, prints: Vec<u32>) {
        self.starts.push((id, self.prints.len()));
        self.prints.extend(prints);
    }

    /// The fingerprints of region `id`'s sections (None: a region not seen).
    fn prints_of(&self, id: SpanKey) -> Option<&[u32]> {
        let i = self.starts.binary_search_by_key(&id, |m| m.0).ok()?;
        let end = self.starts.get(i + 1).map_or(self.prints.len(), |m| m.1);
        Some(&self.prints[self.starts[i].1..end])
    }

    /// Whether region `id` may have a section whose fingerprint is in `grown` (a region not
    /// seen may).
    fn may_touch(&self, id: SpanKey, grown: &rustc_hash::FxHashSet<u32>) -> bool {
        self.prints_of(id)
            .is_none_or(|prints| prints.iter().any(|f| grown.contains(f)))
    }
}

/// The source's contour keys, in region order, and the first round an earlier run kept for
/// each (None: the region is read).
type Memo = (Vec<(SpanKey, u64)>, Vec<Option<FirstRound>>);

/// The marks of the first round, in region order: those of the regions read (`made`, in
/// region order), and with `memo` (the source's contour keys and what an earlier run kept
/// for them) those kept, whose asks go into `asked`; every region's first round is then
/// handed to `reuse` to keep.
fn first_marks(
    made: Vec<(SpanKey, FirstRound)>,
    memo: Option<&Memo>,
    reuse: Option<&dyn Reuse>,
    asked: &mut Asked,
) -> Result<SectionMarks, PolygonError> {
    let mut marks = SectionMarks::default();
    let (Some((keys, got)), Some(reuse)) = (memo, reuse) else {
        for (id, round) in made {
            marks.push(id, round.prints);
        }
        return Ok(marks);
    };
    let mut made = made.into_iter();
    let mut rounds = Vec::with_capacity(keys.len());
    for (&(id, key), kept) in keys.iter().zip(got) {
        let round = match kept {
            Some(round) => {
                asked.extend(round.asked.iter().copied());
                round.clone()
            }
            None => match made.next() {
                Some((read, round)) if read == id => round,
                _ => {
                    return Err(PolygonError::Source(format!(
                        "region at cell ({}, {}), height {}: listed by the source but not \
                         served in the first round",
                        id.x, id.y, id.zmax
                    )))
                }
            },
        };
        marks.push(id, round.prints.clone());
        rounds.push((id, key, round));
    }
    reuse.keep_first_rounds(rounds);
    Ok(marks)
}

/// A section name's fingerprint: its low 32 bits (names are hashes).
fn fingerprint(name: u128) -> u32 {
    name as u32
}

/// `work` of every region of `window` on the current pool, the regions with the most contour
/// points started first, one at a time (a window often holds one region far larger than the
/// rest, the ground of a block, which would otherwise start last on its thread and leave the
/// others idle); the results in the window's order.
fn largest_first<T: Send>(
    window: &[RegionContours],
    work: impl Fn(&RegionContours) -> T + Sync,
) -> Vec<T> {
    let mut done: Vec<(usize, T)> = size_order(window)
        .into_par_iter()
        .with_max_len(1)
        .map(|i| (i, work(&window[i])))
        .collect();
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Each region of `window` through `polygonize` on the current pool, the largest first (see
/// [`largest_first`]), and its polygons through height detail when `detail` is given (a
/// polygon whose detail `reuse` kept takes it, [`Reuse::kept_details`]); the outputs in the
/// window's order, or the first failure in that order.
///
/// A window often holds one region that takes far longer than the rest (the ground of a
/// district, a terrain: its partition alone can outlast every other region together). The
/// first thread to find no region left to start details the regions done so far while the
/// others finish theirs (idle threads join in, the detail being parallel in itself); the
/// regions still under way then are detailed last. A polygon's detail depends on the polygon
/// and the heightfield alone, so the outputs are those of detailing the window at once.
pub(crate) fn polygons_of_window(
    window: &[RegionContours],
    polygonize: impl Fn(&RegionContours) -> Result<RegionOutput, PolygonError> + Sync,
    detail: Option<(&detail::DetailParams, &detail::HeightAt)>,
    reuse: Option<&dyn Reuse>,
) -> Result<Vec<RegionOutput>, PolygonError> {
    type Slot = std::sync::Mutex<Option<Result<RegionOutput, PolygonError>>>;
    let slots: Vec<Slot> = (0..window.len()).map(|_| Slot::new(None)).collect();
    let slot = |i: usize| slots[i].lock().expect("a polygon thread panicked");
    // Details the regions of `which` that came out whole, in one call (their polygons in
    // Z order, see `add_detail`); returns which those were.
    // (Not when a region failed or was stopped: the window then ends in that failure.)
    let failed = || {
        slots
            .iter()
            .any(|s| matches!(*s.lock().expect("a polygon thread panicked"), Some(Err(_))))
    };
    let detail_some = |which: Vec<usize>| -> Vec<usize> {
        let Some((params, height)) = detail.filter(|_| !failed()) else {
            return Vec::new();
        };
        // Kept regions come with their detail.
        let (index, mut outs): (Vec<usize>, Vec<RegionOutput>) = which
            .into_iter()
            .filter_map(
                |i| match slot(i).take_if(|r| r.as_ref().is_ok_and(|o| !o.reused)) {
                    Some(Ok(out)) => Some((i, out)),
                    _ => None,
                },
            )
            .unzip();
        let known: Vec<Option<detail::KeptDetails>> = match reuse {
            Some(reuse) => outs.par_iter().map(|o| reuse.kept_details(o.id)).collect(),
            None => Vec::new(),
        };
        detail::add_detail(&mut outs, params, height, &known);
        for (&i, out) in index.iter().zip(outs) {
            *slot(i) = Some(Ok(out));
        }
        index
    };
    let order = size_order(window);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let early = std::sync::atomic::AtomicBool::new(false);
    let detailed_early = std::sync::OnceLock::new();
    let workers = rayon::current_num_threads().min(window.len()).max(1);
    (0..workers).into_par_iter().with_max_len(1).for_each(|_| {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let out = polygonize(&window[i]);
            *slot(i) = Some(out);
        }
        // The others, still polygonizing, return here at once and so join this detail.
        if detail.is_some() && !early.swap(true, Ordering::AcqRel) {
            let finished = (0..window.len()).filter(|&i| slot(i).is_some()).collect();
            let _ = detailed_early.set(detail_some(finished));
        }
    });
    let mut rest = vec![true; window.len()];
    for &i in detailed_early.get().into_iter().flatten() {
        rest[i] = false;
    }
    detail_some((0..window.len()).filter(|&i| rest[i]).collect());
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .expect("a polygon thread panicked")
                .expect("every region of the window done")
        })
        .collect()
}

/// The indices of `window`'s regions, the most contour points first (ties in window order).
fn size_order(window: &[RegionContours]) -> Vec<usize> {
    let size = |r: &RegionContours| r.contours.iter().map(|c| c.points.len()).sum::<usize>();
    let mut order: Vec<usize> = (0..window.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(size(&window[i])), i));
    order
}

/// Polygons of every region in memory, ready for `tessera_navgraph::build` (tests and
/// tools; bakes stream through [`polygonize_stream`]).
pub fn polygonize(
    regions: &[RegionContours],
    params: PolygonParams,
) -> Result<(MeshInput, PolygonStats), PolygonError> {
    let mut input = MeshInput {
        regions: regions.len() as u32,
        climb: params.portal_climb,
        ..Default::default()
    };
    let mut region = 0u32;
    let stats = polygonize_stream(&mut { regions }, params, None, &mut |out| {
        let base = input.verts.len() as u32;
        let detail_base = input.detail_verts.len() as u32;
        input.verts.extend(out.verts);
        input.detail_verts.extend(out.detail);
        for mut p in out.polys {
            p.verts.iter_mut().for_each(|v| *v += base);
            p.tris.iter_mut().for_each(|t| {
                t.iter_mut().for_each(|v| {
                    *v = if *v & tessera_artifacts::DETAIL != 0 {
                        *v + detail_base
                    } else {
                        *v + base
                    }
                })
            });
            p.region = region;
            input.polys.push(p);
        }
        region += 1;
        Ok(())
    })?;
    input.notches = stats.notches;
    input.by_notches = stats.by_notches.clone();
    Ok((input, stats))
}
