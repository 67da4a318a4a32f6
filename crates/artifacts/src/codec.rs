//! The sealed envelope every tessera file and checkpoint uses.
//!
//! ```text
//! magic [u8; 8] | version u32 LE | payload length u64 LE | xxh3-64 of payload u64 LE | payload
//! ```
//!
//! Versioning policy: the version of a kind changes whenever its payload layout changes; readers
//! accept exactly their own version and refuse others with [`ArtifactError::BadVersion`] (a
//! cache or checkpoint of another version is rebuilt, never reinterpreted).

use crate::ArtifactError;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes before the payload.
pub const HEADER_LEN: usize = 8 + 4 + 8 + 8;

/// Wraps `payload` in the envelope.
pub fn seal(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxh3_64(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Checks the envelope and returns the payload. `artifact` names the kind in errors.
pub fn unseal<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    version: u32,
    artifact: &'static str,
) -> Result<&'a [u8], ArtifactError> {
    if bytes.len() < HEADER_LEN {
        return Err(ArtifactError::Truncated {
            artifact,
            have: bytes.len() as u64,
            need: HEADER_LEN as u64,
        });
    }
    if &bytes[0..8] != magic {
        return Err(ArtifactError::BadMagic { artifact });
    }
    let found = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if found != version {
        return Err(ArtifactError::BadVersion {
            artifact,
            found,
            expected: version,
        });
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap());
    let stored = u64::from_le_bytes(bytes[20..28].try_into().unwrap());
    let have = (bytes.len() - HEADER_LEN) as u64;
    if have != len {
        return Err(ArtifactError::Truncated {
            artifact,
            have: bytes.len() as u64,
            need: HEADER_LEN as u64 + len,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let computed = xxh3_64(payload);
    if computed != stored {
        return Err(ArtifactError::Checksum {
            artifact,
            stored,
            computed,
        });
    }
    Ok(payload)
}

/// A little-endian byte writer for payloads.
#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    /// A writer whose payload will be sealed in place by [`Writer::seal`]: room for the
    /// envelope's header first, then `payload` bytes reserved, so that a payload of known size
    /// is written without growing or copying its buffer.
    pub fn sealed(payload: usize) -> Writer {
        Writer::sealed_in(Vec::new(), payload)
    }

    /// [`Writer::sealed`] in the buffer `bytes` (cleared, its allocation reused).
    pub fn sealed_in(mut bytes: Vec<u8>, payload: usize) -> Writer {
        bytes.clear();
        bytes.reserve(HEADER_LEN + payload);
        bytes.resize(HEADER_LEN, 0);
        Writer { bytes }
    }

    /// Seals a payload begun with [`Writer::sealed`]: the same bytes as [`seal`] of it.
    pub fn seal(self, magic: &[u8; 8], version: u32) -> Vec<u8> {
        let mut out = self.bytes;
        debug_assert!(out.len() >= HEADER_LEN);
        let len = (out.len() - HEADER_LEN) as u64;
        let sum = xxh3_64(&out[HEADER_LEN..]);
        out[0..8].copy_from_slice(magic);
        out[8..12].copy_from_slice(&version.to_le_bytes());
        out[12..20].copy_from_slice(&len.to_le_bytes());
        out[20..28].copy_from_slice(&sum.to_le_bytes());
        out
    }

    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
}

/// The reading side of [`Writer`]; every read is bounds-checked.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    artifact: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], artifact: &'static str) -> Self {
        Reader {
            bytes,
            pos: 0,
            artifact,
        }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ArtifactError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(ArtifactError::Truncated {
                artifact: self.artifact,
                have: self.bytes.len() as u64,
                need: (self.pos as u64).saturating_add(n as u64),
            }),
        }
    }
    pub fn u8(&mut self) -> Result<u8, ArtifactError> {
        Ok(self.take(1)?[0])
    }

    /// A count, refused when `each` bytes per item would not fit what is left (so nothing is
    /// allocated for a count the bytes cannot hold).
    pub fn count(&mut self, each: usize) -> Result<usize, ArtifactError> {
        let n = self.u64()? as usize;
        if n.saturating_mul(each) > self.remaining() {
            return Err(crate::invalid(
                self.artifact,
                "count larger than the payload",
            ));
        }
        Ok(n)
    }

    /// `columns` column lengths (u32 each) as the offsets of a compressed-sparse-rows index
    /// (`columns + 1` entries from 0), refused when they add up to more than `items`.
    pub fn column_starts(
        &mut self,
        columns: usize,
        items: usize,
    ) -> Result<Vec<u32>, ArtifactError> {
        let lengths = self.take(columns.saturating_mul(4))?;
        let mut start = Vec::with_capacity(columns + 1);
        start.push(0u32);
        // Summed in u64, which cannot wrap; a sum past `items` (so past u32) is refused below,
        // whatever the offsets kept meanwhile.
        let mut total = 0u64;
        start.extend(lengths.chunks_exact(4).map(|b| {
            total += u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
            total as u32
        }));
        if total > items as u64 {
            return Err(crate::invalid(
                self.artifact,
                "column lengths exceed the item count",
            ));
        }
        Ok(start)
    }

    /// `n` little-endian u32s.
    pub fn u32s(&mut self, n: usize) -> Result<Vec<u32>, ArtifactError> {
        Ok(self
            .take(n.saturating_mul(4))?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    pub fn u32(&mut self) -> Result<u32, ArtifactError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn i32(&mut self) -> Result<i32, ArtifactError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, ArtifactError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn f64(&mut self) -> Result<f64, ArtifactError> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_in_place_gives_the_same_bytes() {
        let mut w = Writer::sealed(3);
        w.u32(7);
        w.u8(1);
        let mut plain = Writer::default();
        plain.u32(7);
        plain.u8(1);
        assert_eq!(w.seal(b"TSTEST01", 2), seal(b"TSTEST01", 2, &plain.bytes));
    }

    #[test]
    fn seal_round_trip_and_corruption() {
        let sealed = seal(b"TSTEST01", 3, b"hello world");
        assert_eq!(
            unseal(&sealed, b"TSTEST01", 3, "t").unwrap(),
            b"hello world"
        );
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            unseal(&flipped, b"TSTEST01", 3, "t"),
            Err(ArtifactError::Checksum { .. })
        ));
        assert!(matches!(
            unseal(&sealed[..sealed.len() - 1], b"TSTEST01", 3, "t"),
            Err(ArtifactError::Truncated { .. })
        ));
        assert!(matches!(
            unseal(&sealed, b"TSTEST01", 4, "t"),
            Err(ArtifactError::BadVersion { found: 3, .. })
        ));
        assert!(matches!(
            unseal(&sealed, b"TSOTHER1", 3, "t"),
            Err(ArtifactError::BadMagic { .. })
        ));
    }
}
