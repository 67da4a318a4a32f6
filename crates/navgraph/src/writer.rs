//! The streaming writer: the archive of a [`NavMesh`] written from spill files, its arrays
//! copied through in chunks, so that the mesh is never in memory; then the sealed header.
//!
//! [`NavMeshOut`] is not a second declaration of the file's layout: it archives *as*
//! [`ArchivedNavMesh`] (rkyv's `as` attribute), field by field by name, so the compiler checks
//! every field's archived type against the one [`NavMesh`] declaration, and
//! `same_fields_as_navmesh` fails to compile when a field is added to or removed from
//! [`NavMesh`] and not here. The order of serialization (which places the arrays' bytes) is the
//! field order; a test checks the written bytes against rkyv's own archive of the same mesh.

use std::io::{self, Seek, SeekFrom, Write};

use bytemuck::Pod;
use rkyv::rancor::{self, Source};
use rkyv::ser::{Writer, WriterExt};
use rkyv::vec::{ArchivedVec, VecResolver};
use rkyv::{Archive, Place, Serialize};
use tessera_navmesh::{
    ArchivedGrid, ArchivedHierarchy, ArchivedNavMesh, Area, Cluster, Component, Entrance, Frame,
    Grid, Header, Hierarchy, Link, NavMesh, OffMeshLink, Poly, Stats, HEADER_LEN,
};
use tessera_spill::Spill;

use crate::assemble::{say, Report, Step};
use crate::BuildError;

/// A vector archived from a spill file: the records are copied into the archive as they are
/// (their archived form has the same bytes on a little-endian machine).
pub(crate) struct Column<T>(pub Spill<T>);

#[cfg(not(target_endian = "little"))]
compile_error!("the navmesh writer copies records as they are: little-endian machines only");

impl<T: Archive + Pod> Archive for Column<T> {
    type Archived = ArchivedVec<T::Archived>;
    type Resolver = VecResolver;

    fn resolve(&self, resolver: VecResolver, out: Place<Self::Archived>) {
        ArchivedVec::resolve_from_len(self.0.len() as usize, resolver, out);
    }
}

impl<T, S> Serialize<S> for Column<T>
where
    T: Archive + Pod,
    S: rancor::Fallible + Writer + ?Sized,
    S::Error: Source,
{
    fn serialize(&self, s: &mut S) -> Result<VecResolver, S::Error> {
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<T::Archived>());
        let pos = s.align_for::<T::Archived>()?;
        let mut failed: Option<S::Error> = None;
        let res = self.0.for_each_chunk(1 << 14, |chunk| {
            if let Err(e) = s.write(bytemuck::cast_slice(chunk)) {
                failed = Some(e);
                return Err(io::Error::other("archive write failed"));
            }
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        res.map_err(S::Error::new)?;
        Ok(VecResolver::from_pos(pos))
    }
}

/// [`Grid`] with its tables in spill files; archives as [`ArchivedGrid`].
#[derive(Archive, Serialize)]
#[rkyv(as = ArchivedGrid)]
pub(crate) struct GridOut {
    pub min: [f32; 2],
    pub cell: f32,
    pub width: u32,
    pub height: u32,
    pub start: Column<u32>,
    pub items: Column<u32>,
}

/// [`Hierarchy`] with its tables in spill files; archives as [`ArchivedHierarchy`].
#[derive(Archive, Serialize)]
#[rkyv(as = ArchivedHierarchy)]
pub(crate) struct HierarchyOut {
    pub poly_cluster: Column<u32>,
    pub clusters: Column<Cluster>,
    pub entrances: Column<Entrance>,
    pub costs: Column<f32>,
}

/// [`NavMesh`] with its arrays in spill files; archives as [`ArchivedNavMesh`]. Fields in the
/// order of [`NavMesh`]'s.
#[derive(Archive, Serialize)]
#[rkyv(as = ArchivedNavMesh)]
pub(crate) struct NavMeshOut {
    pub frame: Frame,
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub verts: Column<[f32; 3]>,
    pub polys: Column<Poly>,
    pub poly_verts: Column<u32>,
    pub poly_neis: Column<u32>,
    pub detail_tris: Column<[u32; 3]>,
    pub detail_verts: Column<[f32; 3]>,
    pub links: Vec<Link>,
    pub off_mesh: Vec<OffMeshLink>,
    pub areas: Vec<Area>,
    pub grid: GridOut,
    pub components: Vec<Component>,
    pub hierarchy: HierarchyOut,
    pub stats: Stats,
}

/// One list of field names, two exhaustive patterns: compiles only while [`NavMesh`] and
/// [`NavMeshOut`] (and [`Grid`] and [`GridOut`], [`Hierarchy`] and [`HierarchyOut`]) have
/// exactly the same fields. The `as`
/// attribute checks the types of those fields.
macro_rules! same_fields {
    ($($field:ident),+; grid: $($grid:ident),+; hierarchy: $($hier:ident),+) => {
        #[allow(dead_code)]
        fn same_fields_as_navmesh(mesh: NavMesh, out: NavMeshOut) {
            let NavMesh {
                $($field: _,)+
                grid: Grid { $($grid: _,)+ },
                hierarchy: Hierarchy { $($hier: _,)+ },
            } = mesh;
            let NavMeshOut {
                $($field: _,)+
                grid: GridOut { $($grid: _,)+ },
                hierarchy: HierarchyOut { $($hier: _,)+ },
            } = out;
        }
    };
}

same_fields!(
    frame, bounds_min, bounds_max, verts, polys, poly_verts, poly_neis, detail_tris,
    detail_verts, links, off_mesh, areas, components, stats;
    grid: min, cell, width, height, start, items;
    hierarchy: poly_cluster, clusters, entrances, costs
);

/// Bytes of the archive between two reports of its length.
const REPORT_EVERY_BYTE: u64 = 64 << 20;

/// Hashes what passes through, and reports the bytes written every [`REPORT_EVERY_BYTE`].
struct Hashing<'w, 'r, W> {
    inner: &'w mut W,
    hash: xxhash_rust::xxh3::Xxh3,
    len: u64,
    report: &'w mut Report<'r>,
    reported: u64,
    /// The report asked to stop (the write then fails).
    stopped: bool,
}

impl<W: Write> Write for Hashing<'_, '_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.len += n as u64;
        if self.len >= self.reported + REPORT_EVERY_BYTE {
            self.reported = self.len;
            if say(self.report, Step::Done(self.len)).is_err() {
                self.stopped = true;
                return Err(io::Error::other("stopped"));
            }
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the file to `out` (which must be empty): a blank header, the archive streamed
/// through a hash, then the sealed header over the blank. Returns the file's length.
pub(crate) fn write_archive<W: Write + Seek>(
    mesh: &NavMeshOut,
    key: u64,
    tile_cells: u32,
    out: &mut W,
    report: &mut Report,
) -> Result<u64, BuildError> {
    out.write_all(&[0u8; HEADER_LEN])?;
    let mut hashing = Hashing {
        inner: out,
        hash: xxhash_rust::xxh3::Xxh3::new(),
        len: 0,
        report,
        reported: 0,
        stopped: false,
    };
    let writer = rkyv::ser::writer::IoWriter::new(&mut hashing);
    let written = rkyv::api::high::to_bytes_in::<_, rancor::Error>(mesh, writer).map(drop);
    if hashing.stopped {
        return Err(BuildError::Stopped);
    }
    written.map_err(io::Error::other)?;
    let (len, digest) = (hashing.len, hashing.hash.digest());
    let header = Header::new(len, digest, key, tile_cells);
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&header.to_bytes())?;
    out.seek(SeekFrom::End(0))?;
    Ok(HEADER_LEN as u64 + len)
}
