//! Stage keys: the identity of everything a stage's output depends on. A checkpoint made
//! under another key is not reused.
//!
//! A key is made from what its stage reads, each named and in a canonical encoding: the
//! typed struct (a config's derived parameters, a grid frame, an earlier stage's key)
//! serialized as JSON (fields in declaration order, floats in their shortest exact form).
//! Each stage names its inputs in its own file (`bin::key`, `voxelize::key`,
//! `polygons::key`); nothing lists fields by hand, so a field added to a parameter struct
//! enters the keys of the stages that read it.

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3;

/// Bumped when a stage's output changes meaning, so old checkpoints are recomputed.
const CHECKPOINT_VERSION: u32 = 3;

/// A key being made: the stage's name, then each input it reads.
pub(crate) struct StageKey(Xxh3);

impl StageKey {
    pub(crate) fn new(stage: &str) -> StageKey {
        let mut h = Xxh3::new();
        h.update(&CHECKPOINT_VERSION.to_le_bytes());
        let mut key = StageKey(h);
        key.field(stage.as_bytes());
        key
    }

    /// An input the stage reads, by name.
    pub(crate) fn reads<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> StageKey {
        self.field(name.as_bytes());
        let bytes = serde_json::to_vec(value).expect("stage inputs serialize");
        self.field(&bytes);
        self
    }

    pub(crate) fn finish(self) -> u64 {
        self.0.digest()
    }

    /// Length-prefixed, so that no two different sequences of inputs hash the same bytes.
    fn field(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
}

/// The scene as the stages after ingest see it: the source's identity and the cache made
/// from it (its triangles' checksum and the world origin they are rebased on).
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct SceneIdentity {
    pub content_hash: u64,
    pub up: u8,
    pub payload_hash: u64,
    pub origin: [f64; 3],
}

impl SceneIdentity {
    pub(crate) fn of(info: &tessera_ingest::cache::CacheInfo) -> SceneIdentity {
        SceneIdentity {
            content_hash: info.key.content_hash,
            up: info.key.up.code(),
            payload_hash: info.payload_hash,
            origin: info.origin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_stage_name_value_and_field_boundaries() {
        let a = StageKey::new("a").reads("x", &1u32).finish();
        assert_eq!(a, StageKey::new("a").reads("x", &1u32).finish());
        assert_ne!(a, StageKey::new("b").reads("x", &1u32).finish());
        assert_ne!(a, StageKey::new("a").reads("y", &1u32).finish());
        assert_ne!(a, StageKey::new("a").reads("x", &2u32).finish());
        assert_ne!(
            StageKey::new("a").reads("xy", "z").finish(),
            StageKey::new("a").reads("x", "yz").finish()
        );
    }

    #[test]
    fn every_config_change_that_reaches_a_parameter_struct_changes_its_encoding() {
        let base = tessera_config::BakeConfig::default();
        let mut other = base.clone();
        other.agent.max_slope = 44.0;
        let key = |c: &tessera_config::BakeConfig| {
            StageKey::new("v")
                .reads("voxel", &c.voxel_params())
                .finish()
        };
        assert_ne!(key(&base), key(&other));
        // Floats are encoded exactly: a change in the last bit is a different key.
        let x = 0.15f64;
        let next = f64::from_bits(x.to_bits() + 1);
        assert_ne!(
            StageKey::new("f").reads("x", &x).finish(),
            StageKey::new("f").reads("x", &next).finish()
        );
    }
}
