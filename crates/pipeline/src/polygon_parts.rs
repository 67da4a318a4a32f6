//! The parts of a distributed polygon stage: a process other than 0 polygonizes its share of
//! the regions ([`RegionPart`](crate::RegionPart)) and writes their polygons to a part file
//! in the shared bake folder, `work/polygons/part-P.pack` (a pack: one chunk per region, in
//! region order, each checked by its checksum); process 0's assembler reads the parts back
//! in process order after its own share, so the navmesh gets every region in region order.
//!
//! A part also holds the first rounds of simplification its process made or took (one chunk
//! under [`FIRST_ROUNDS`]), so that process 0 keeps every region's in the next bake's
//! `work/region-polygons.pack`, as a bake in one process does.
//!
//! A part is scratch of one polygon stage: it is removed with `work/polygons/`, and a rerun
//! polygonizes again.

use std::path::Path;

use tessera_artifacts::codec::{Reader, Writer};
use tessera_artifacts::{ArtifactError, InputPoly, SpanKey};
use tessera_polygons::{FirstRound, RegionOutput};
use tessera_store::{PackReader, PackWriter};

use crate::region_reuse::{FirstRounds, FIRST_ROUNDS};
use crate::BakeError;

/// Regions' first rounds of simplification, in region order: id, contours' key, round.
pub(crate) type FirstRoundList = Vec<(SpanKey, u64, FirstRound)>;

/// Pack kind of a part file.
pub(crate) const PART_KIND: &[u8; 8] = b"TSPOLYPT";

const ARTIFACT: &str = "polygon part";

/// A region's polygons as the assembler takes them, with what the stage counts: its id,
/// notches, area, contour vertices before and after simplification, whether the partition fell
/// back, whether it is a ground region, its key ([`tessera_polygons::Reuse`]) and the extent of its contours, vertices,
/// height-detail points and polygons.
pub(crate) fn encode(out: &RegionOutput) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(out.key);
    out.extent.iter().for_each(|&c| w.i32(c));
    w.i32(out.id.y);
    w.i32(out.id.x);
    w.u32(out.id.zmax);
    w.u64(out.notches);
    w.u8(out.area);
    w.u64(out.contour_vertices);
    w.u64(out.simplified_vertices);
    w.u8(u8::from(out.fell_back));
    w.u8(u8::from(out.ground));
    w.u64(out.verts.len() as u64);
    for v in &out.verts {
        v.iter().for_each(|&c| w.i32(c));
    }
    w.u64(out.detail.len() as u64);
    for p in &out.detail {
        p.iter().for_each(|&c| w.u32(c.to_bits()));
    }
    w.u64(out.polys.len() as u64);
    for p in &out.polys {
        w.u32(p.region);
        w.u64(p.verts.len() as u64);
        p.verts.iter().for_each(|&v| w.u32(v));
        w.u64(p.tris.len() as u64);
        p.tris.iter().flatten().for_each(|&v| w.u32(v));
        w.u64(p.blocked.len() as u64);
        p.blocked.iter().for_each(|&b| w.u8(b as u8));
    }
    w.bytes
}

/// [`encode`] read back into a [`RegionOutput`].
pub(crate) fn decode(bytes: &[u8]) -> Result<RegionOutput, ArtifactError> {
    let r = &mut Reader::new(bytes, ARTIFACT);
    let key = r.u64()?;
    let extent = [r.i32()?, r.i32()?, r.i32()?, r.i32()?];
    let id = tessera_artifacts::SpanKey {
        y: r.i32()?,
        x: r.i32()?,
        zmax: r.u32()?,
    };
    let notches = r.u64()?;
    let area = r.u8()?;
    let contour_vertices = r.u64()?;
    let simplified_vertices = r.u64()?;
    let fell_back = r.u8()? != 0;
    let ground = r.u8()? != 0;
    let n = r.count(12)?;
    let verts = (0..n)
        .map(|_| Ok([r.i32()?, r.i32()?, r.i32()?]))
        .collect::<Result<Vec<_>, ArtifactError>>()?;
    let n = r.count(12)?;
    let detail = (0..n)
        .map(|_| {
            Ok([
                f32::from_bits(r.u32()?),
                f32::from_bits(r.u32()?),
                f32::from_bits(r.u32()?),
            ])
        })
        .collect::<Result<Vec<_>, ArtifactError>>()?;
    let n = r.count(4 + 24)?;
    let mut polys = Vec::with_capacity(n);
    for _ in 0..n {
        let region = r.u32()?;
        let k = r.count(4)?;
        let verts = r.u32s(k)?;
        let k = r.count(12)?;
        let flat = r.u32s(3 * k)?;
        let tris = flat.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        let k = r.count(1)?;
        let blocked = r.take(k)?.iter().map(|&b| b != 0).collect();
        polys.push(InputPoly {
            verts,
            region,
            tris,
            blocked,
        });
    }
    if r.remaining() != 0 {
        return Err(ArtifactError::Invalid {
            artifact: ARTIFACT,
            what: "trailing bytes".into(),
        });
    }
    Ok(RegionOutput {
        verts,
        detail,
        polys,
        notches,
        area,
        id,
        key,
        extent,
        ground,
        contour_vertices,
        simplified_vertices,
        fell_back,
        ..RegionOutput::default()
    })
}

/// Writes one process's regions, in order, to a part file.
pub(crate) struct PartWriter {
    pack: PackWriter,
    regions: u32,
}

impl PartWriter {
    pub(crate) fn create(path: &Path) -> Result<PartWriter, BakeError> {
        Ok(PartWriter {
            pack: PackWriter::create(path, PART_KIND, &[])?,
            regions: 0,
        })
    }

    pub(crate) fn add(&mut self, out: &RegionOutput) -> Result<(), BakeError> {
        self.pack.append(self.regions, &encode(out))?;
        self.regions += 1;
        Ok(())
    }

    /// Writes the first rounds of the part's regions (`first`, in region order; none when
    /// the stage kept none) and puts the part in place; returns how many regions it holds.
    pub(crate) fn finish(mut self, first: &[(SpanKey, u64, FirstRound)]) -> Result<u64, BakeError> {
        if !first.is_empty() {
            self.pack
                .append(FIRST_ROUNDS, &FirstRounds::encode(first))?;
        }
        self.pack.finish()?;
        Ok(u64::from(self.regions))
    }
}

/// Hands every region of the part file at `path` to `sink`, in order; the part must hold
/// `regions` of them (as its writer said). Returns the first rounds the part holds.
pub(crate) fn read_part(
    path: &Path,
    regions: u64,
    sink: &mut dyn FnMut(RegionOutput) -> Result<(), BakeError>,
) -> Result<FirstRoundList, BakeError> {
    let pack = PackReader::open(path, PART_KIND)?;
    let corrupt = |message: String| BakeError::Corrupt {
        path: path.to_path_buf(),
        message,
    };
    let mut keys = pack.keys();
    let first = match keys.last() {
        Some(&FIRST_ROUNDS) => {
            keys.pop();
            FirstRounds::decode(&pack.read(FIRST_ROUNDS)?)
                .ok_or_else(|| corrupt("its first rounds of simplification are damaged".into()))?
        }
        _ => Vec::new(),
    };
    if keys.len() as u64 != regions || keys.iter().enumerate().any(|(i, &k)| k as usize != i) {
        return Err(corrupt(format!(
            "holds {} regions, {regions} were written",
            keys.len()
        )));
    }
    for key in keys {
        let out = decode(&pack.read(key)?).map_err(|e| corrupt(format!("region {key}: {e}")))?;
        sink(out)?;
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RegionOutput {
        RegionOutput {
            verts: vec![[0, 0, 3], [4, 0, 3], [4, 5, -2], [0, 5, 3]],
            detail: vec![[1.5, 2.25, 3.0]],
            polys: vec![
                InputPoly {
                    verts: vec![0, 1, 2],
                    region: 7,
                    tris: vec![[0, 1, 2]],
                    blocked: vec![true, false, true],
                },
                InputPoly {
                    verts: vec![0, 2, 3],
                    region: 7,
                    tris: vec![[0, 2, 0x8000_0000]],
                    blocked: Vec::new(),
                },
            ],
            notches: 2,
            area: 5,
            id: tessera_artifacts::SpanKey {
                y: -3,
                x: 7,
                zmax: 11,
            },
            contour_vertices: 40,
            simplified_vertices: 12,
            fell_back: true,
            key: 0x1234_5678_9abc,
            ..RegionOutput::default()
        }
    }

    #[test]
    fn a_part_gives_back_its_regions_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-1.pack");
        let mut w = PartWriter::create(&path).unwrap();
        let (a, mut b) = (sample(), sample());
        b.notches = 0;
        b.polys.pop();
        w.add(&a).unwrap();
        w.add(&b).unwrap();
        w.add(&RegionOutput::default()).unwrap();
        let first = vec![(
            a.id,
            0xfeed,
            FirstRound {
                asked: vec![(u128::MAX - 5, 3), (7, 0)],
                prints: vec![9, 8],
            },
        )];
        assert_eq!(w.finish(&first).unwrap(), 3);
        let mut got = Vec::new();
        let rounds = read_part(&path, 3, &mut |o| {
            got.push(o);
            Ok(())
        })
        .unwrap();
        // The first rounds come back beside the regions, not as one of them.
        assert_eq!(rounds, first);
        let key = |o: &RegionOutput| {
            (
                (o.notches, o.area, o.id, o.contour_vertices),
                (o.simplified_vertices, o.fell_back, o.key),
                o.verts.clone(),
                o.detail.clone(),
                o.polys.clone(),
            )
        };
        assert_eq!(got.len(), 3);
        assert_eq!(key(&got[0]), key(&a));
        assert_eq!(key(&got[1]), key(&b));
        assert_eq!(key(&got[2]), key(&RegionOutput::default()));
        // A part with fewer regions than its writer said is refused, naming the file.
        let e = read_part(&path, 4, &mut |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("part-1.pack") && e.contains("4 were written"),
            "{e}"
        );
    }

    #[test]
    fn a_cut_record_is_refused_not_read_past() {
        let bytes = encode(&sample());
        for cut in [0, 8, 20, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let back = decode(&bytes).unwrap();
        assert_eq!(back.polys, sample().polys);
    }
}
