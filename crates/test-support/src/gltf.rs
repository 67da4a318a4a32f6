//! glTF 2.0 files from a JSON document and its binary buffer.

use std::path::Path;

/// A glTF document whose only buffer (`buffers[0]`, with no `uri`) is `bin`.
pub struct Gltf {
    pub json: String,
    pub bin: Vec<u8>,
}

impl Gltf {
    /// The document as a GLB container: the 12-byte header, the JSON chunk (padded with
    /// spaces) and the BIN chunk (padded with zeros), each chunk 4-byte aligned.
    pub fn glb(&self) -> Vec<u8> {
        let mut json = self.json.clone().into_bytes();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }

    /// Writes the GLB container to `path`.
    pub fn write_glb(&self, path: &Path) {
        std::fs::write(path, self.glb())
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// Writes the document as `.gltf` JSON at `path`, its buffer beside it as `scene.bin`
    /// (named by the buffer's `uri`).
    pub fn write_gltf(&self, path: &Path) {
        let json = self
            .json
            .replacen(r#""buffers":[{"#, r#""buffers":[{"uri":"scene.bin","#, 1);
        std::fs::write(path, json).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        let bin = path.with_file_name("scene.bin");
        std::fs::write(&bin, &self.bin)
            .unwrap_or_else(|e| panic!("writing {}: {e}", bin.display()));
    }
}
