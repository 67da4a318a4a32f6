//! Building a [`NavMesh`] in memory from polygons on the voxel grid, through the same
//! [`Assembler`] a bake streams its regions into.

use rustc_hash::FxHashMap as HashMap;
use tessera_artifacts::{InputPoly, MeshInput, DETAIL};
use tessera_navmesh::{Frame, NavMesh, NavMeshError};

use crate::{Assembler, BuildError, LinkSpec, Pruning};

/// What pruning from seed points removed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pruned {
    pub polygons: u64,
    /// Connected groups of removed polygons, and their plan area [m²].
    pub islands: u64,
    pub area: f64,
    /// Seeds (by index) that stand on no polygon.
    pub unplaced_seeds: Vec<usize>,
}

/// Builds the mesh in memory (tests and small tools; bakes use [`Assembler`] directly).
/// Polygons are taken region by region in the order of their `region`. Deterministic.
pub fn build(frame: Frame, input: &MeshInput) -> Result<NavMesh, BuildError> {
    build_pruned(frame, input, &Pruning::default()).map(|(mesh, _)| mesh)
}

/// [`build`], keeping only what `pruning` keeps: the polygons an agent standing on one of its
/// seeds (internal frame) can reach over portals and links (seed 001), or without seeds the
/// components at least its minimum island area; what was dropped is counted.
pub fn build_pruned(
    frame: Frame,
    input: &MeshInput,
    pruning: &Pruning,
) -> Result<(NavMesh, Pruned), BuildError> {
    build_linked(frame, input, pruning, Vec::new())
}

/// [`build_pruned`] with off-mesh links (see [`Assembler::off_mesh_links`]).
pub fn build_linked(
    frame: Frame,
    input: &MeshInput,
    pruning: &Pruning,
    off_mesh: Vec<LinkSpec>,
) -> Result<(NavMesh, Pruned), BuildError> {
    build_with(frame, input, pruning, |asm| asm.off_mesh_links(off_mesh))
        .map(|(mesh, pruned, _)| (mesh, pruned))
}

/// [`build_pruned`] with the assembler set up by `setup` before any region is added; also
/// what the assembler reported.
pub(crate) fn build_with(
    frame: Frame,
    input: &MeshInput,
    pruning: &Pruning,
    setup: impl FnOnce(&mut Assembler),
) -> Result<(NavMesh, Pruned, crate::Assembled), BuildError> {
    let dir = tempfile::tempdir()?;
    let mut asm = Assembler::new(frame, input.climb, dir.path(), 1 << 20)?;
    setup(&mut asm);
    // Polygons grouped by region; each region's vertices renumbered locally.
    let mut by_region: Vec<Vec<usize>> = vec![Vec::new(); input.regions as usize];
    for (i, p) in input.polys.iter().enumerate() {
        if p.region >= input.regions {
            return Err(BuildError::Poly {
                poly: i,
                detail: "region out of range",
            });
        }
        let out_of_range = |v: u32| {
            if v & DETAIL != 0 {
                (v & !DETAIL) as usize >= input.detail_verts.len()
            } else {
                v as usize >= input.verts.len()
            }
        };
        if p.verts.iter().any(|&v| v & DETAIL != 0)
            || p.verts
                .iter()
                .chain(p.tris.iter().flatten())
                .any(|&v| out_of_range(v))
        {
            return Err(BuildError::Poly {
                poly: i,
                detail: "vertex index out of range",
            });
        }
        by_region[p.region as usize].push(i);
    }
    let mut new_id = vec![u32::MAX; input.polys.len()];
    let mut next = 0u32;
    for polys in &by_region {
        // Exact duplicates welded within the region.
        let mut local: HashMap<[i32; 3], u32> = HashMap::default();
        let mut verts = Vec::new();
        let mut detail: HashMap<u32, u32> = HashMap::default();
        let mut detail_verts: Vec<[f32; 3]> = Vec::new();
        let mut out = Vec::with_capacity(polys.len());
        for &i in polys {
            let p = &input.polys[i];
            let mut map = |v: u32| {
                if v & DETAIL != 0 {
                    return DETAIL
                        | *detail.entry(v).or_insert_with(|| {
                            detail_verts.push(input.detail_verts[(v & !DETAIL) as usize]);
                            detail_verts.len() as u32 - 1
                        });
                }
                *local.entry(input.verts[v as usize]).or_insert_with(|| {
                    verts.push(input.verts[v as usize]);
                    verts.len() as u32 - 1
                })
            };
            let verts_l: Vec<u32> = p.verts.iter().map(|&v| map(v)).collect();
            let tris_l: Vec<[u32; 3]> = p.tris.iter().map(|t| t.map(&mut map)).collect();
            out.push(InputPoly {
                verts: verts_l,
                region: p.region,
                tris: tris_l,
                blocked: p.blocked.clone(),
            });
            new_id[i] = next;
            next += 1;
        }
        asm.add_region(&verts, &detail_verts, &out, 0)
            .map_err(|e| match e {
                BuildError::Poly { poly, detail } => BuildError::Poly {
                    poly: polys[poly - (next as usize - polys.len())],
                    detail,
                },
                e => e,
            })?;
    }
    asm.add_outlines(input.notches, &input.by_notches);
    for (i, l) in input.links.iter().enumerate() {
        let (Some(&a), Some(&b)) = (new_id.get(l.0 as usize), new_id.get(l.1 as usize)) else {
            return Err(BuildError::Link { link: i });
        };
        asm.add_link(a, b, l.2, l.3);
    }
    let mut file = std::io::Cursor::new(Vec::new());
    let done = asm.finish(pruning, 0, 0, &mut file)?;
    let what = "assembled navmesh";
    let bytes = tessera_navmesh::aligned(&file.into_inner());
    let archived = tessera_navmesh::access(&bytes, what)?;
    let mesh: NavMesh =
        rkyv::deserialize::<NavMesh, rkyv::rancor::Error>(archived).map_err(|e| {
            NavMeshError::Archive {
                what: what.into(),
                detail: e.to_string(),
            }
        })?;
    let pruned = Pruned {
        polygons: done.stats.polygons_removed,
        islands: done.stats.islands_removed,
        area: done.stats.area_removed,
        unplaced_seeds: done.unplaced_seeds.clone(),
    };
    Ok((mesh, pruned, done))
}
