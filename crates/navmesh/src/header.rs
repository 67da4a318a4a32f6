//! The 64 bytes that open a navmesh file: one `#[repr(C)]` type, read and written whole.

use std::mem::offset_of;

use bytemuck::{Pod, Zeroable};

use crate::NavMeshError;

/// Magic bytes that open every navmesh file.
pub const MAGIC: &[u8; 8] = b"TSNAVMSH";
/// Format version; bumped whenever [`crate::NavMesh`] or [`Header`] changes (6: the archive's
/// offsets and lengths are 64-bit, so a navmesh may pass 2 GiB; 7: each polygon's connected
/// component, and the table of components; 8: the hierarchical graph, [`crate::Hierarchy`]; 9:
/// off-mesh links, [`crate::OffMeshLink`], and each link's kind and cost).
pub const VERSION: u32 = 10;
/// Header length; the archive starts here (a multiple of rkyv's alignment).
pub const HEADER_LEN: usize = std::mem::size_of::<Header>();

/// The file header. On disk every integer is little-endian; in memory a `Header` holds native
/// values ([`Header::from_bytes`] and [`Header::to_bytes`] convert).
///
/// The checksum is the xxh3 of the header's bytes without the checksum field, followed by
/// the payload's own xxh3 (little-endian), so that a writer can hash the payload as it streams
/// it out and seal the header last.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`VERSION`] of the writer.
    pub version: u32,
    /// Zero.
    pub reserved: u32,
    /// Bytes of the archive that follows the header.
    pub payload_len: u64,
    /// See the type's documentation.
    pub checksum: u64,
    /// Key of the inputs and settings the mesh was made from (the bake's stage key; it tells
    /// when the file can be reused); 0 when none was given.
    pub key: u64,
    /// Tile edge of the bake [cells]; 0 when unknown. Tiles start at the internal frame's plan
    /// origin.
    pub tile_cells: u32,
    /// Zero, up to 64 bytes.
    pub padding: [u8; 20],
}

const _: () = assert!(HEADER_LEN == 64);

impl Header {
    /// The sealed header of a file whose payload has `payload_len` bytes and xxh3
    /// `payload_digest`.
    pub fn new(payload_len: u64, payload_digest: u64, key: u64, tile_cells: u32) -> Header {
        let mut header = Header {
            magic: *MAGIC,
            version: VERSION,
            reserved: 0,
            payload_len,
            checksum: 0,
            key,
            tile_cells,
            padding: [0; 20],
        };
        header.checksum = header.seal(payload_digest);
        header
    }

    /// The header at the start of `bytes`, or `None` when there are fewer than
    /// [`HEADER_LEN`] bytes. Nothing is checked.
    pub fn from_bytes(bytes: &[u8]) -> Option<Header> {
        let raw: Header = bytemuck::pod_read_unaligned(bytes.get(..HEADER_LEN)?);
        Some(raw.swap_le())
    }

    /// The header as it is stored.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        bytemuck::cast(self.swap_le())
    }

    /// Converts every integer between native and little-endian order (the identity on a
    /// little-endian machine; its own inverse).
    fn swap_le(self) -> Header {
        Header {
            version: self.version.to_le(),
            reserved: self.reserved.to_le(),
            payload_len: self.payload_len.to_le(),
            checksum: self.checksum.to_le(),
            key: self.key.to_le(),
            tile_cells: self.tile_cells.to_le(),
            ..self
        }
    }

    /// The checksum this header, as it stands, should carry over a payload with xxh3
    /// `payload_digest` (for tools that rewrite a field and seal the file again).
    pub fn resealed(&self, payload_digest: u64) -> u64 {
        self.seal(payload_digest)
    }

    /// The checksum this header should carry over a payload with xxh3 `payload_digest`.
    fn seal(&self, payload_digest: u64) -> u64 {
        let bytes = self.to_bytes();
        let at = offset_of!(Header, checksum);
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&bytes[..at]);
        h.update(&bytes[at + std::mem::size_of::<u64>()..]);
        h.update(&payload_digest.to_le_bytes());
        h.digest()
    }

    /// Magic and format version.
    pub(crate) fn check_kind(&self, what: &str) -> Result<(), NavMeshError> {
        if &self.magic != MAGIC {
            return Err(NavMeshError::Magic { what: what.into() });
        }
        if self.version != VERSION {
            return Err(NavMeshError::Version {
                what: what.into(),
                found: self.version,
            });
        }
        Ok(())
    }

    /// Payload length and checksum against a payload of `found` bytes with xxh3 `digest`.
    pub(crate) fn check_payload(
        &self,
        found: u64,
        digest: u64,
        what: &str,
    ) -> Result<(), NavMeshError> {
        if found != self.payload_len {
            return Err(NavMeshError::Truncated {
                what: what.into(),
                expected: self.payload_len,
                found,
            });
        }
        if self.seal(digest) != self.checksum {
            return Err(NavMeshError::Checksum { what: what.into() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_keeps_its_documented_byte_layout() {
        // Format 4's offsets: magic 0, version 8, payload length 16, checksum 24, key 32,
        // tile cells 40. A change here is a format change (bump VERSION).
        assert_eq!(
            [
                offset_of!(Header, magic),
                offset_of!(Header, version),
                offset_of!(Header, payload_len),
                offset_of!(Header, checksum),
                offset_of!(Header, key),
                offset_of!(Header, tile_cells),
                offset_of!(Header, padding),
            ],
            [0, 8, 16, 24, 32, 40, 44]
        );
        let h = Header::new(0x0102, 0xabcd, 0x0a0b_0c0d, 32);
        let b = h.to_bytes();
        assert_eq!(&b[..8], MAGIC);
        assert_eq!(b[8..12], VERSION.to_le_bytes());
        assert_eq!(b[16..24], 0x0102u64.to_le_bytes());
        assert_eq!(b[32..40], 0x0a0b_0c0du64.to_le_bytes());
        assert_eq!(b[40..44], 32u32.to_le_bytes());
        assert!(b[12..16].iter().chain(&b[44..]).all(|&x| x == 0));
        assert_eq!(Header::from_bytes(&b), Some(h));
        assert_eq!(Header::from_bytes(&b[..63]), None);
        assert!(h.check_payload(0x0102, 0xabcd, "t").is_ok());
        assert!(h.check_payload(0x0102, 0xabce, "t").is_err());
    }
}
