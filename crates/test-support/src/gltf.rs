//! glTF 2.0 files from a JSON document and its binary buffer.

use std::path::Path;

/// A glTF document whose only buffer (`buffers[0]`, with no `uri`) is `bin`.
pub struct Gltf {
    pub json: String,
    pub bin: Vec<u8>,
}

impl Gltf {
    /// The document as a GLB container (the gltf crate's writer): the 12-byte header, the
    /// JSON chunk (padded with spaces) and the BIN chunk (padded with zeros).
    pub fn glb(&self) -> Vec<u8> {
        let container = gltf::Glb {
            header: gltf::binary::Header {
                magic: *b"glTF",
                version: 2,
                length: 0, // computed by the writer
            },
            json: self.json.as_bytes().into(),
            bin: Some(self.bin.as_slice().into()),
        };
        container.to_vec().expect("writing to a vector cannot fail")
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
