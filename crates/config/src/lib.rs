//! Bake settings.
//!
//! [`BakeConfig`] is what a person writes (TOML, world units: metres and degrees). It is
//! validated once, with the offending field named, and converted once into grid units:
//! [`VoxelParams`] (voxelization and regions) and [`PolygonParams`] (polygons, height detail,
//! links), which is all the stages ever see. Every world-to-grid conversion of a bake is here.
//! Both derive `Serialize`: the pipeline's stage keys hash them. Presets live as documented
//! TOML files in the repository's `configs/` folder and are compiled in, so `--config def`
//! works anywhere.
//!
//! This crate does no I/O beyond reading the config file it is asked to load and the links
//! file that config names.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A problem with a config, naming where it came from and which field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("config {source_name}: field `{field}`: {message}")]
    Field {
        source_name: String,
        field: &'static str,
        message: String,
    },
    #[error("config {source_name}: {message}")]
    Parse {
        source_name: String,
        message: String,
    },
    #[error("config {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("no config file or preset named `{0}` (presets: {presets})", presets = PRESET_NAMES.join(", "))]
    Unknown(String),
}

/// Voxel grid settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VoxelSettings {
    /// Horizontal voxel edge (cx = cy) [m]. Limit: 0.001 ..= 100.
    pub cell_size: f64,
    /// Vertical voxel size (cz) [m]. Limit: 0.001 ..= 100.
    pub cell_height: f64,
    /// Tile edge [cells], or `auto`. Limit: the band (agent radius in cells + 3) ..= 8192. An implementation detail: any value
    /// gives the same navmesh; it trades memory per tile against per-tile overhead.
    pub tile_size: TileSize,
}

/// A tile's edge: a number of cells, or `auto` ([`TileSize::resolve`]). Written in TOML as
/// `tile_size = 256` or `tile_size = "auto"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileSize {
    Auto,
    Cells(u32),
}

impl TileSize {
    /// The largest tile edge `auto` picks: 256 cells, or 8 bands when the band is wider than 32
    /// cells (rounded up to a multiple of 64). The grid then evens the edge out over the
    /// world ([`even_tile_edge`]), so that no row or column of tiles is a sliver.
    ///
    /// Why: a tile is voxelized with its band around it, so the band costs
    /// `(1 + 2 band / edge)^2 - 1` more rasterization and filtering, 15 % at 256 cells and a
    /// band of 9 (0.6 m radius at 0.1 m cells) against 30 % at 128 and 72 % at the 32 cells
    /// of RecastDemo's tiles; larger tiles also leave fewer borders for the merge. Past 256
    /// cells a tile's working set outgrows the processor's caches and bakes get slower again
    /// (citygen M at 0.1 m, 2 threads: 512-cell tiles lose 8 % to 256; benches/RESULTS.md).
    /// The rule depends on the settings and the world's extent alone, never on the machine's
    /// threads or memory, so a bake's files stay the same for any thread count and budget (a
    /// tile too large for the budget is voxelized in parts).
    pub fn resolve(self, band: u32) -> u32 {
        match self {
            TileSize::Cells(n) => n,
            TileSize::Auto => 256u32.max((8 * band).div_ceil(64) * 64),
        }
    }
}

/// The tile edge of `auto` on a world `cells` cells across its longer side: as few tiles as
/// edges of at most `largest` cells need, each of them as wide as the others (the last one
/// at most a cell narrower per tile). A world of 833 cells gets 4 tiles of 209 rather than 3 of
/// 256 and one of 65: the same work spread evenly over the threads, and a band around 4
/// tiles instead of around one sliver that is mostly band.
pub fn even_tile_edge(cells: u32, largest: u32) -> u32 {
    let largest = largest.max(1);
    let tiles = cells.max(1).div_ceil(largest);
    cells.max(1).div_ceil(tiles)
}

impl From<u32> for TileSize {
    fn from(cells: u32) -> TileSize {
        TileSize::Cells(cells)
    }
}

impl std::str::FromStr for TileSize {
    type Err = String;

    /// `auto` or a number of cells.
    fn from_str(text: &str) -> Result<TileSize, String> {
        match text.trim() {
            "auto" => Ok(TileSize::Auto),
            t => t
                .parse::<u32>()
                .map(TileSize::Cells)
                .map_err(|_| format!("`{t}` is neither `auto` nor a number of cells")),
        }
    }
}

impl std::fmt::Display for TileSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TileSize::Auto => f.write_str("auto"),
            TileSize::Cells(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for TileSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TileSize::Auto => s.serialize_str("auto"),
            TileSize::Cells(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> Deserialize<'de> for TileSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TileSize, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Cells(i64),
            Text(String),
        }
        // Only `voxel.tile_size` has this type: its errors name the field.
        let fail = |m: String| serde::de::Error::custom(format!("voxel.tile_size: {m}"));
        // An untagged enum's own error names the enum ("data did not match any variant of
        // untagged enum Raw"): replaced by what the field takes.
        let raw = Raw::deserialize(d).map_err(|_: D::Error| {
            fail("expected \"auto\" or a whole number of cells (1 ..= 8192)".to_string())
        })?;
        match raw {
            Raw::Cells(n) => u32::try_from(n).map(TileSize::Cells).map_err(|_| {
                fail(format!(
                    "{n} is out of range (1 ..= 8192 cells, or \"auto\")"
                ))
            }),
            Raw::Text(t) => t.parse().map_err(fail),
        }
    }
}

/// The agent the mesh is built for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentSettings {
    /// Clearance the agent needs above a floor [m]. Limit: >= cell_height, <= 1000.
    pub height: f64,
    /// Agent radius: walkable area is eroded by it [m]. Limit: 0 ..= 100 (0: no erosion).
    pub radius: f64,
    /// Highest step the agent climbs (ledges, kerbs, stairs) [m]. Limit: 0 ..= 100.
    pub max_climb: f64,
    /// Steepest walkable slope [degrees]. Limit: 0 ..< 90.
    pub max_slope: f64,
}

/// One agent of a bake for several (`[[agents]]`): a name and the settings of [`AgentSettings`]
/// (missing ones take its defaults). One bake writes `navmesh-NAME.tsn` for each, and
/// `navmesh.tsn` for the first; ingest and binning run once for all of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NamedAgent {
    /// 1 to 32 characters of `A-Z a-z 0-9 _ -` (it names files), unique.
    pub name: String,
    pub height: f64,
    pub radius: f64,
    pub max_climb: f64,
    pub max_slope: f64,
}

impl Default for NamedAgent {
    fn default() -> Self {
        NamedAgent::new("", &AgentSettings::default())
    }
}

impl NamedAgent {
    pub fn new(name: &str, a: &AgentSettings) -> NamedAgent {
        NamedAgent {
            name: name.to_string(),
            height: a.height,
            radius: a.radius,
            max_climb: a.max_climb,
            max_slope: a.max_slope,
        }
    }

    /// Its settings as the single `[agent]` table holds them.
    pub fn settings(&self) -> AgentSettings {
        AgentSettings {
            height: self.height,
            radius: self.radius,
            max_climb: self.max_climb,
            max_slope: self.max_slope,
        }
    }
}

/// The most `[[agents]]` one bake takes.
pub const MAX_AGENTS: usize = 16;

/// How walkable spans are grouped into regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmentationMode {
    /// Seed 000: 8-neighbours with the same floor height. Flat regions; slopes become
    /// terraces one voxel high.
    Flat,
    /// Seed 001's layers: 8-neighbours whose floors lie in the same climb-high band, so
    /// neighbours differ by at most the climb and no region holds two spans of one column;
    /// slopes and stairs become a few regions.
    Layered,
    /// Regions that follow the walkable surface: each column's lowest walkable floor (its
    /// ground) joins its 8-neighbours' ground within the climb, so ground is one region however
    /// it rises; floors stacked above it group by climb-high bands as when layered. Never two
    /// floors of one column and never a step beyond the climb inside a region. The default:
    /// on terrain a few large regions where layered gives bands.
    Surface,
}

/// Region settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegionSettings {
    /// `flat`, `layered` or `surface`. Layered and surface need the climb to be below the
    /// agent height.
    pub mode: SegmentationMode,
    /// Surface mode: regions are cut at a grid of squares this many cells wide, so that no
    /// region outgrows the polygon stage's window however large the world [cells]; 0: never.
    pub block: u32,
}

/// [`RegionSettings::block`] by default: 1024 cells (300 m at 0.3 m cells).
pub const DEFAULT_REGION_BLOCK: u32 = 1024;

impl Default for RegionSettings {
    fn default() -> Self {
        RegionSettings {
            mode: SegmentationMode::Surface,
            block: DEFAULT_REGION_BLOCK,
        }
    }
}

/// How regions are cut into convex polygons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Partition {
    /// Seed 002: one portal per notch, the shortest in its area of interest, unnecessary
    /// portals removed, optional tau relaxation.
    Anavmg,
    /// Seed 000, 5.1.3: triangulate, then remove every inessential diagonal.
    HertelMehlhorn,
}

/// Polygon settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolygonSettings {
    /// `anavmg` (default) or `hertel-mehlhorn`.
    pub partition: Partition,
    /// Convexity relaxation for `anavmg` [degrees]: a corner up to 180 + tau counts as convex.
    pub tau_degrees: f64,
    /// `anavmg`: remove portals that became unnecessary once every notch has one, longest
    /// first (seed 002, Table 1's second column). `false` keeps them (its first column).
    pub portal_removal: bool,
    /// How far a simplified contour may stray from the voxel contour [m]; 0 keeps every
    /// vertex.
    pub max_error: f64,
    /// Height detail (seed 004): distance between height samples along polygon edges and
    /// across their surface [m]; 0 turns detail off (the polygon's own triangles).
    pub detail_sample_distance: f64,
    /// Height detail: largest height difference left between the detail surface and the
    /// heightfield [m].
    pub detail_max_error: f64,
    /// Walkable seed points in the scene's own coordinates and up axis. When any are given,
    /// polygons no agent can reach from one of them (over portals and links) are dropped.
    pub reachable_from: Vec<[f64; 3]>,
    /// Without `reachable_from` seeds: a connected part of the navmesh (over portals and
    /// links) with less plan area than this [m²] is dropped, such as the top of a crate no
    /// agent can climb onto. 0 keeps every part.
    pub min_island_area: f64,
}

impl Default for PolygonSettings {
    fn default() -> Self {
        PolygonSettings {
            partition: Partition::Anavmg,
            tau_degrees: 0.0,
            portal_removal: true,
            max_error: 0.15,
            detail_sample_distance: 1.0,
            detail_max_error: 0.1,
            reachable_from: Vec::new(),
            min_island_area: DEFAULT_MIN_ISLAND_AREA,
        }
    }
}

/// The default `min_island_area` [m²]. Tops of crates, kiosks and tree canopies are islands of
/// a few to about 20 m² once eroded by the agent's radius (the demo world's largest, two
/// overlapping canopies, is 21.5 m²); the smallest roof of a citygen building is about 100.
/// What an agent can walk onto (a balcony with stairs) belongs to the part it is reached from
/// and is never an island, whatever its own size.
pub const DEFAULT_MIN_ISLAND_AREA: f64 = 30.0;

/// An off-mesh link (`[[links]]`): a way between two points of the mesh that the mesh cannot
/// show, such as a jump down a ledge, a ladder or a gap to leap. Points in the scene's own
/// coordinates and up axis [m].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSettings {
    pub from: [f64; 3],
    pub to: [f64; 3],
    /// Whether it may be taken from `to` to `from` too (default true: a ladder; false for a
    /// jump down).
    #[serde(default = "yes")]
    pub bidirectional: bool,
    /// How far each end may be from the mesh [m]: it snaps to the nearest walkable polygon
    /// within this distance, and the bake fails when there is none. Limit: > 0 ..= 100.
    #[serde(default = "default_link_radius")]
    pub radius: f64,
    /// Added to the link's length in path costs [m]. Limit: 0 ..= 1e6.
    #[serde(default)]
    pub cost: f64,
    /// What paths report when they take it. 1 to 64 characters.
    #[serde(default = "default_link_name")]
    pub name: String,
}

fn yes() -> bool {
    true
}

fn default_link_radius() -> f64 {
    0.5
}

fn default_link_name() -> String {
    "link".to_string()
}

/// An area (`[[areas]]`): the triangles whose scene names match one of `match` (glob
/// patterns: `*` any run of characters, `?` one character; case-sensitive) belong to it. A
/// triangle takes the first rule that matches any of its names (OBJ `usemtl`, `g`, `o`; glTF
/// material, mesh, node and its ancestors); no match is area `default` (walkable, cost 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AreaSettings {
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    /// 1 to 64 characters, unique, not `default`.
    pub name: String,
    /// Whether agents stand on it (false: water, lava). Default true.
    #[serde(default = "yes")]
    pub walkable: bool,
    /// Multiplies the length of a path through it. Limit: > 0 ..= 1e6. Default 1.
    #[serde(default = "one")]
    pub cost: f64,
}

fn one() -> f64 {
    1.0
}

/// The most `[[areas]]` rules one bake takes: with `default`, 64 areas.
pub const MAX_AREAS: usize = 63;

/// The name of the area of every triangle no rule matches.
pub const DEFAULT_AREA: &str = "default";

/// A links file (`links_file`): `[[links]]` tables and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksFile {
    #[serde(default)]
    links: Vec<LinkSettings>,
}

/// The most off-mesh links one bake takes.
pub const MAX_LINKS: usize = 1 << 20;

/// Everything a bake needs to know besides the scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct BakeConfig {
    /// A TOML file of more `[[links]]` (a path relative to the config file's folder), read
    /// when the config is loaded: its links follow the config's own. Gone from the effective
    /// config, which lists every link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links_file: Option<String>,
    pub voxel: VoxelSettings,
    /// The agent; with `[[agents]]`, the first of them (the TOML gives one or the other).
    pub agent: AgentSettings,
    pub regions: RegionSettings,
    pub polygons: PolygonSettings,
    /// Off-mesh links, in order (see [`LinkSettings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSettings>,
    /// Areas by scene names, in order of precedence (see [`AreaSettings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub areas: Vec<AreaSettings>,
    /// Several agents baked at once, in order (see [`NamedAgent`]); empty: the one `agent`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<NamedAgent>,
}

impl Default for VoxelSettings {
    fn default() -> Self {
        VoxelSettings {
            cell_size: 0.1,
            cell_height: 0.05,
            tile_size: TileSize::Auto,
        }
    }
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            height: 2.0,
            radius: 0.4,
            max_climb: 0.5,
            max_slope: 45.0,
        }
    }
}

/// Preset names, in the order `--help` lists them.
pub const PRESET_NAMES: [&str; 7] = ["default", "def", "S2", "S3", "S4", "S5", "recast-demo"];

const PRESETS: [(&str, &str); 7] = [
    ("default", include_str!("../../../configs/default.toml")),
    ("def", include_str!("../../../configs/def.toml")),
    ("S2", include_str!("../../../configs/S2.toml")),
    ("S3", include_str!("../../../configs/S3.toml")),
    ("S4", include_str!("../../../configs/S4.toml")),
    ("S5", include_str!("../../../configs/S5.toml")),
    (
        "recast-demo",
        include_str!("../../../configs/recast-demo.toml"),
    ),
];

impl BakeConfig {
    /// A compiled-in preset by name (case-sensitive, as in the seed's Table 2).
    pub fn preset(name: &str) -> Option<BakeConfig> {
        let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
        Some(BakeConfig::from_toml(text, &format!("preset {name}")).expect("presets are valid"))
    }

    /// Loads `spec`: an existing file path, else a preset name.
    pub fn load(spec: &str) -> Result<BakeConfig, ConfigError> {
        let path = Path::new(spec);
        let read_error = |error| ConfigError::Read {
            path: spec.to_string(),
            error,
        };
        if path.exists() && !path.is_file() {
            return Err(read_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a folder, not a config file",
            )));
        }
        // A name no preset has that looks like a file (a folder in it, or `.toml`) is a file
        // that is not there, not an unknown preset.
        let looks_like_a_file = spec.contains(std::path::MAIN_SEPARATOR)
            || path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        if !path.exists() && looks_like_a_file && BakeConfig::preset(spec).is_none() {
            return Err(read_error(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file",
            )));
        }
        if path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
                path: spec.to_string(),
                error,
            })?;
            let dir = path.parent().unwrap_or(Path::new(""));
            return BakeConfig::from_toml_in(&text, spec, dir);
        }
        BakeConfig::preset(spec).ok_or_else(|| ConfigError::Unknown(spec.to_string()))
    }

    /// Parses and validates TOML text; `source_name` names it in errors. Missing fields take the
    /// `default` preset's values; unknown fields are refused.
    /// A `links_file` it names is read relative to the current folder.
    pub fn from_toml(text: &str, source_name: &str) -> Result<BakeConfig, ConfigError> {
        BakeConfig::from_toml_in(text, source_name, Path::new(""))
    }

    /// [`BakeConfig::from_toml`], a `links_file` read relative to `dir`.
    fn from_toml_in(text: &str, source_name: &str, dir: &Path) -> Result<BakeConfig, ConfigError> {
        let parse = |text: &str, source_name: &str| ConfigError::Parse {
            source_name: source_name.to_string(),
            message: text.trim_end().replace('\n', " "),
        };
        let mut config: BakeConfig =
            toml::from_str(text).map_err(|e| parse(&e.to_string(), source_name))?;
        if let Some(first) = config.agents.first() {
            let table: toml::Table =
                toml::from_str(text).map_err(|e| parse(&e.to_string(), source_name))?;
            if table.contains_key("agent") {
                return Err(ConfigError::Field {
                    source_name: source_name.to_string(),
                    field: "agent",
                    message: "give one agent as [agent] or several as [[agents]], not both"
                        .to_string(),
                });
            }
            config.agent = first.settings();
        }
        if let Some(file) = config.links_file.take() {
            let path = dir.join(&file);
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|error| ConfigError::Read {
                path: shown.clone(),
                error,
            })?;
            let more: LinksFile =
                toml::from_str(&text).map_err(|e| parse(&e.to_string(), &shown))?;
            config.links.extend(more.links);
        }
        config.validate(source_name)?;
        Ok(config)
    }

    /// Canonical TOML of the effective settings (written beside every bake).
    pub fn to_toml(&self) -> String {
        if self.agents.is_empty() {
            return toml::to_string(self).expect("config serializes");
        }
        // `[[agents]]` stand for `[agent]`, which holds their first.
        let mut table = toml::Table::try_from(self).expect("config serializes");
        table.remove("agent");
        toml::to_string(&table).expect("config serializes")
    }

    /// The bake of each agent: its name (None for the one `[agent]`) and the config with that
    /// agent as `agent`. Every one keeps the list, so that all voxelize on one grid (the band
    /// around each tile is the widest agent's: see [`BakeConfig::voxel_params`]).
    pub fn agent_bakes(&self) -> Vec<(Option<String>, BakeConfig)> {
        if self.agents.is_empty() {
            return vec![(None, self.clone())];
        }
        self.agents
            .iter()
            .map(|a| {
                let mut config = self.clone();
                config.agent = a.settings();
                (Some(a.name.clone()), config)
            })
            .collect()
    }

    /// Checks every field against its documented limits (with `[[agents]]`, for each agent).
    pub fn validate(&self, source_name: &str) -> Result<(), ConfigError> {
        self.validate_agents(source_name)?;
        for (name, config) in self.agent_bakes() {
            match name {
                None => config.validate_one(source_name)?,
                Some(name) => config.validate_one(&format!("{source_name}, agent `{name}`"))?,
            }
        }
        Ok(())
    }

    /// Checks the `[[agents]]` list: at most [`MAX_AGENTS`], names that can name files,
    /// unique.
    fn validate_agents(&self, source_name: &str) -> Result<(), ConfigError> {
        let fail = |message: String| ConfigError::Field {
            source_name: source_name.to_string(),
            field: "agents",
            message,
        };
        if self.agents.len() > MAX_AGENTS {
            return Err(fail(format!(
                "{} agents, more than the {MAX_AGENTS} one bake takes",
                self.agents.len()
            )));
        }
        for (i, a) in self.agents.iter().enumerate() {
            let name = &a.name;
            let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if name.is_empty() || name.len() > 32 || !name.chars().all(plain) {
                return Err(fail(format!(
                    "agent {i} (\"{name}\"): a name has 1 to 32 characters of A-Z, a-z, 0-9, `_` \
                     and `-` (it names the agent's navmesh file)"
                )));
            }
            if self.agents[..i].iter().any(|b| &b.name == name) {
                return Err(fail(format!("agent {i} (\"{name}\"): the name is taken")));
            }
        }
        Ok(())
    }

    /// [`BakeConfig::validate`] for the one agent `agent`.
    fn validate_one(&self, source_name: &str) -> Result<(), ConfigError> {
        let fail = |field: &'static str, message: String| ConfigError::Field {
            source_name: source_name.to_string(),
            field,
            message,
        };
        let range = |field: &'static str, v: f64, lo: f64, hi: f64, lo_open: bool| {
            let ok = v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi;
            if ok {
                Ok(())
            } else {
                let lo_s = if lo_open {
                    format!("> {lo}")
                } else {
                    format!(">= {lo}")
                };
                Err(fail(
                    field,
                    format!("{v} is out of range (must be {lo_s} and <= {hi})"),
                ))
            }
        };
        let v = &self.voxel;
        range("voxel.cell_size", v.cell_size, 0.0, 100.0, true)?;
        if v.cell_size < 0.001 {
            return Err(fail(
                "voxel.cell_size",
                format!("{} is below the minimum 0.001 m", v.cell_size),
            ));
        }
        range("voxel.cell_height", v.cell_height, 0.0, 100.0, true)?;
        if v.cell_height < 0.001 {
            return Err(fail(
                "voxel.cell_height",
                format!("{} is below the minimum 0.001 m", v.cell_height),
            ));
        }
        if let TileSize::Cells(n) = v.tile_size {
            if n == 0 || n > 8192 {
                return Err(fail(
                    "voxel.tile_size",
                    format!("{n} is out of range (1 ..= 8192 cells, or \"auto\")"),
                ));
            }
        }
        let a = &self.agent;
        range("agent.height", a.height, 0.0, 1000.0, true)?;
        if a.height < v.cell_height {
            return Err(fail(
                "agent.height",
                format!(
                    "{} m is below the cell height {} m",
                    a.height, v.cell_height
                ),
            ));
        }
        range("agent.radius", a.radius, 0.0, 100.0, false)?;
        range("agent.max_climb", a.max_climb, 0.0, 100.0, false)?;
        if self.regions.mode != SegmentationMode::Flat {
            let p = self.voxel_params();
            if p.region_step > p.walkable_height {
                return Err(fail(
                    "regions.mode",
                    format!(
                        "{} regions need the climb ({} m) below the agent height ({} m); use `flat`",
                        if self.regions.mode == SegmentationMode::Layered {
                            "layered"
                        } else {
                            "surface"
                        },
                        a.max_climb,
                        a.height
                    ),
                ));
            }
        }
        if self.regions.block != 0 && self.regions.block < 16 {
            return Err(fail(
                "regions.block",
                format!(
                    "{} cells is below 16: regions that small are a tiling; use 0 for no cut",
                    self.regions.block
                ),
            ));
        }
        range(
            "polygons.tau_degrees",
            self.polygons.tau_degrees,
            0.0,
            30.0,
            false,
        )?;
        range(
            "polygons.max_error",
            self.polygons.max_error,
            0.0,
            100.0,
            false,
        )?;
        range(
            "polygons.detail_sample_distance",
            self.polygons.detail_sample_distance,
            0.0,
            1000.0,
            false,
        )?;
        range(
            "polygons.detail_max_error",
            self.polygons.detail_max_error,
            0.0,
            100.0,
            false,
        )?;
        range(
            "polygons.min_island_area",
            self.polygons.min_island_area,
            0.0,
            1.0e6,
            false,
        )?;
        for (i, seed) in self.polygons.reachable_from.iter().enumerate() {
            if seed.iter().any(|c| !c.is_finite()) {
                return Err(fail(
                    "polygons.reachable_from",
                    format!("seed {i} = {seed:?} is not a finite point"),
                ));
            }
        }
        self.validate_links(source_name)?;
        self.validate_areas(source_name)?;
        let d = &self.polygons;
        if d.detail_sample_distance > 0.0 && d.detail_sample_distance < 2.0 * self.voxel.cell_size {
            return Err(fail(
                "polygons.detail_sample_distance",
                format!(
                    "{} m is below two cells ({} m); use 0 to turn detail off",
                    d.detail_sample_distance,
                    2.0 * self.voxel.cell_size
                ),
            ));
        }
        if !(a.max_slope.is_finite() && a.max_slope >= 0.0 && a.max_slope < 90.0) {
            return Err(fail(
                "agent.max_slope",
                format!("{} is out of range (0 ..< 90 degrees)", a.max_slope),
            ));
        }
        // A tile narrower than the band voxelized around it copies every triangle into many
        // tiles ((1 + 2 band / edge)^2 of them) and voxelizes each cell as often: the tile pack
        // and the work grow without bound while the navmesh stays the same.
        let band = self.voxel_params().band;
        if let TileSize::Cells(n) = v.tile_size {
            if n < band {
                let copies = (n + 2 * band).div_ceil(n).pow(2);
                return Err(fail(
                    "voxel.tile_size",
                    format!(
                        "{n} cells is narrower than the band voxelized around each tile ({band} \
                         cells: the agent radius and 3): each triangle would be binned into up to \
                         {copies} tiles; use at least {band}, or \"auto\""
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks the off-mesh links: finite points, radius, cost and name in range.
    fn validate_links(&self, source_name: &str) -> Result<(), ConfigError> {
        let fail = |i: usize, l: &LinkSettings, message: String| ConfigError::Field {
            source_name: source_name.to_string(),
            field: "links",
            message: format!("link {i} (\"{}\"): {message}", l.name),
        };
        if self.links.len() > MAX_LINKS {
            return Err(ConfigError::Field {
                source_name: source_name.to_string(),
                field: "links",
                message: format!(
                    "{} links, more than the {MAX_LINKS} one bake takes",
                    self.links.len()
                ),
            });
        }
        for (i, l) in self.links.iter().enumerate() {
            for (end, p) in [("from", l.from), ("to", l.to)] {
                if p.iter().any(|c| !c.is_finite()) {
                    return Err(fail(i, l, format!("`{end}` = {p:?} is not a finite point")));
                }
            }
            if !(l.radius.is_finite() && l.radius > 0.0 && l.radius <= 100.0) {
                return Err(fail(
                    i,
                    l,
                    format!(
                        "radius {} is out of range (must be > 0 and <= 100 m)",
                        l.radius
                    ),
                ));
            }
            if !(l.cost.is_finite() && l.cost >= 0.0 && l.cost <= 1.0e6) {
                return Err(fail(
                    i,
                    l,
                    format!("cost {} is out of range (must be >= 0 and <= 1e6)", l.cost),
                ));
            }
            if l.name.is_empty() || l.name.chars().count() > 64 {
                return Err(fail(i, l, "a name has 1 to 64 characters".to_string()));
            }
        }
        Ok(())
    }

    /// Checks the areas: at most [`MAX_AREAS`] rules, names unique and not `default`,
    /// patterns given, costs in range.
    fn validate_areas(&self, source_name: &str) -> Result<(), ConfigError> {
        let fail = |message: String| ConfigError::Field {
            source_name: source_name.to_string(),
            field: "areas",
            message,
        };
        if self.areas.len() > MAX_AREAS {
            return Err(fail(format!(
                "{} areas, more than the {MAX_AREAS} one bake takes besides `{DEFAULT_AREA}`",
                self.areas.len()
            )));
        }
        for (i, a) in self.areas.iter().enumerate() {
            let name = &a.name;
            if name.is_empty() || name.chars().count() > 64 {
                return Err(fail(format!("area {i}: a name has 1 to 64 characters")));
            }
            if name == DEFAULT_AREA || self.areas[..i].iter().any(|b| &b.name == name) {
                return Err(fail(format!(
                    "area {i} (\"{name}\"): the name is taken (names are unique and not \
                     `{DEFAULT_AREA}`; list every pattern of one area in one rule)"
                )));
            }
            if a.patterns.is_empty() || a.patterns.iter().any(|p| p.is_empty()) {
                return Err(fail(format!(
                    "area {i} (\"{name}\"): `match` needs at least one non-empty pattern"
                )));
            }
            if !(a.cost.is_finite() && a.cost > 0.0 && a.cost <= 1.0e6) {
                return Err(fail(format!(
                    "area {i} (\"{name}\"): cost {} is out of range (must be > 0 and <= 1e6)",
                    a.cost
                )));
            }
        }
        Ok(())
    }

    /// The settings in voxel units: the one place world units become grid units.
    pub fn voxel_params(&self) -> VoxelParams {
        let v = &self.voxel;
        let a = &self.agent;
        let cells = |radius: f64| (radius / v.cell_size).ceil() as u32;
        let radius = cells(a.radius);
        // Ledges look one cell out and erosion `radius` cells along walkable spans; two more
        // cells keep the tile's outermost ring (which sees no neighbours) out of reach of the
        // core and of the two-cell ring around it that the region stage reads. Several agents
        // share one grid, tiles and binning: the widest agent's band (a wider band than an
        // agent needs changes nothing of its navmesh).
        let band = self
            .agents
            .iter()
            .map(|a| cells(a.radius))
            .fold(radius, u32::max)
            + 3;
        VoxelParams {
            cell_size: v.cell_size,
            cell_height: v.cell_height,
            tile_size: v.tile_size.resolve(band),
            tile_even: v.tile_size == TileSize::Auto,
            walkable_height: ((a.height / v.cell_height).ceil() as u32).max(1),
            walkable_climb: (a.max_climb / v.cell_height).floor() as u32,
            walkable_radius: radius,
            walkable_slope_cos: a.max_slope.to_radians().cos(),
            band,
            region_step: match self.regions.mode {
                SegmentationMode::Flat => 1,
                SegmentationMode::Layered | SegmentationMode::Surface => {
                    (a.max_climb / v.cell_height).floor() as u32 + 1
                }
            },
            region_surface: self.regions.mode == SegmentationMode::Surface,
            region_block: match self.regions.mode {
                SegmentationMode::Surface => self.regions.block,
                _ => 0,
            },
            blocked_areas: self
                .areas
                .iter()
                .enumerate()
                .filter(|(_, a)| !a.walkable)
                .fold(0, |mask, (i, _)| mask | 1 << (i + 1)),
        }
    }
}

impl BakeConfig {
    /// The polygon stage's settings in grid units: the one place its world units become
    /// cells and voxels (the companion of [`BakeConfig::voxel_params`]).
    pub fn polygon_params(&self) -> PolygonParams {
        let v = &self.voxel;
        let p = &self.polygons;
        let grid = self.voxel_params();
        PolygonParams {
            partition: match p.partition {
                Partition::Anavmg => PartitionParams::Anavmg {
                    tau: p.tau_degrees.to_radians(),
                    portal_removal: p.portal_removal,
                },
                Partition::HertelMehlhorn => PartitionParams::HertelMehlhorn,
            },
            max_error: p.max_error / v.cell_size,
            // Vertex heights are each side's own floor; floors stacked in one column are at
            // least the agent's height apart.
            portal_climb: grid.walkable_height.saturating_sub(1),
            detail: (p.detail_sample_distance > 0.0).then(|| DetailParams {
                sample_distance: p.detail_sample_distance / v.cell_size,
                max_error: p.detail_max_error / v.cell_height,
                max_points: DETAIL_MAX_POINTS,
                floor_reach: grid.walkable_height / 2,
                ground: grid.region_surface,
            }),
            link_reach: self.agent.radius / v.cell_size,
            link_climb: grid.walkable_climb,
            reachable_from: p.reachable_from.clone(),
            min_island_area: if p.reachable_from.is_empty() {
                p.min_island_area
            } else {
                0.0
            },
            links: self.links.clone(),
            areas: self.areas.clone(),
        }
    }
}

/// Settings in voxel units, derived once by [`BakeConfig::voxel_params`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct VoxelParams {
    /// [m]
    pub cell_size: f64,
    /// [m]
    pub cell_height: f64,
    /// [cells], `auto` resolved ([`TileSize::resolve`]); with `tile_even`, the largest edge.
    pub tile_size: u32,
    /// `auto`: the grid evens the tile edge out over the world ([`even_tile_edge`]).
    pub tile_even: bool,
    /// Clearance needed above a floor [voxels], at least 1.
    pub walkable_height: u32,
    /// Highest step [voxels].
    pub walkable_climb: u32,
    /// Erosion radius [cells].
    pub walkable_radius: u32,
    /// A triangle is walkable when its normal's up component (normalised) exceeds this.
    pub walkable_slope_cos: f64,
    /// Cells voxelized around each tile's core [cells].
    pub band: u32,
    /// Floors group into regions by bands of `region_step` [voxels]: 1 when flat, the climb
    /// plus one when layered or surface.
    pub region_step: u32,
    /// Bands are counted from each column's lowest span (surface mode), not from zero.
    pub region_surface: bool,
    /// Surface regions are cut at a grid of squares this wide [cells]; 0: never (and always 0
    /// in the other modes).
    pub region_block: u32,
    /// The areas that are not walkable (bit `id`, id = `[[areas]]` index + 1): spans whose
    /// top is theirs never are.
    pub blocked_areas: u64,
}

/// Most points height detail adds to one polygon.
const DETAIL_MAX_POINTS: usize = 128;

/// The polygon stage's settings in grid units, derived once by [`BakeConfig::polygon_params`].
/// Only what can change the navmesh is here (tau only with `anavmg`, the detail settings only
/// with detail on), so a stage key made from it changes exactly when the navmesh may.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolygonParams {
    pub partition: PartitionParams,
    /// How far a simplified contour may stray from the voxel contour [cells]; 0 keeps every
    /// vertex.
    pub max_error: f64,
    /// Portals join edges whose heights differ by at most this [voxels]: one less than the
    /// agent's clearance.
    pub portal_climb: u32,
    /// Height detail (seed 004); `None` when off.
    pub detail: Option<DetailParams>,
    /// Stair links join facing blocked edges whose ends are within this plan distance
    /// [cells] (the agent radius) ...
    pub link_reach: f64,
    /// ... and within this height [voxels] (the climb).
    pub link_climb: u32,
    /// Reachability seeds in the scene's own coordinates and up axis [m]; the navmesh's frame,
    /// which knows the scene's origin, converts them.
    pub reachable_from: Vec<[f64; 3]>,
    /// Without seeds, connected parts of less plan area than this are dropped [m²]; 0 (and
    /// always with seeds, which decide alone) keeps them.
    pub min_island_area: f64,
    /// Off-mesh links, in the scene's own coordinates and up axis [m] (converted by the
    /// navmesh's frame, as the seeds are).
    pub links: Vec<LinkSettings>,
    /// The `[[areas]]` rules (area id = index + 1; `default` is 0): the navmesh's table.
    pub areas: Vec<AreaSettings>,
}

/// How regions are cut into convex polygons, with that rule's settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum PartitionParams {
    /// Seed 002 with convexity relaxation `tau` [radians]; `portal_removal` removes the
    /// portals that became unnecessary.
    Anavmg { tau: f64, portal_removal: bool },
    /// Seed 000, 5.1.3.
    HertelMehlhorn,
}

/// Height detail in grid units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DetailParams {
    /// Distance between height samples [cells].
    pub sample_distance: f64,
    /// Largest height difference left between the detail surface and the heightfield
    /// [voxels].
    pub max_error: f64,
    /// Most points added to one polygon.
    pub max_points: usize,
    /// Farthest a floor may be from the height asked for [voxels]: half the agent's
    /// clearance, so never the floor above or below.
    pub floor_reach: u32,
    /// Surface regions: polygons of ground regions read each column's lowest walkable floor
    /// inside (their own, however far the polygon's plane is from it on a hill), and along
    /// their edges the floor walked to from the corners.
    pub ground: bool,
}

/// Parses a byte size such as `64MiB`, `2GiB`, `512M`, `1.5G` or a plain byte count.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size (examples: 64MiB, 2GiB, 1000000)"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" => 1e12,
        "tib" => 1024f64.powi(4),
        other => {
            return Err(format!(
                "`{text}`: unknown size unit `{other}` (use KiB, MiB, GiB)"
            ))
        }
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is not a usable size"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_preset_file_matches_code_defaults() {
        assert_eq!(
            BakeConfig::preset("default").unwrap(),
            BakeConfig::default()
        );
    }

    #[test]
    fn every_preset_loads_and_table_2_values_hold() {
        for name in PRESET_NAMES {
            BakeConfig::preset(name).unwrap_or_else(|| panic!("{name}"));
        }
        let s3 = BakeConfig::preset("S3").unwrap();
        assert_eq!((s3.voxel.cell_size, s3.voxel.cell_height), (0.0666, 0.501));
        assert_eq!(
            BakeConfig::preset("S5").unwrap().voxel.tile_size,
            TileSize::Cells(467)
        );
        // S3 and S4 have voxels taller than the climb: no step is detectable.
        assert_eq!(s3.voxel_params().walkable_climb, 0);
    }

    #[test]
    fn invalid_values_name_the_field() {
        let cases = [
            ("[voxel]\ncell_size = 0.0", "voxel.cell_size"),
            ("[voxel]\ncell_size = -1.0", "voxel.cell_size"),
            ("[voxel]\ntile_size = 0", "voxel.tile_size"),
            ("[regions]\nblock = 4", "regions.block"),
            ("[voxel]\ntile_size = \"huge\"", "voxel.tile_size"),
            ("[voxel]\ntile_size = -3", "voxel.tile_size"),
            (
                "[voxel]\ncell_height = 0.5\n[agent]\nheight = 0.2",
                "agent.height",
            ),
            ("[agent]\nmax_slope = 90.0", "agent.max_slope"),
            ("[agent]\nradius = nan", "agent.radius"),
            ("[polygons]\ntau_degrees = 45.0", "polygons.tau_degrees"),
            ("[polygons]\ntau_degrees = -1.0", "polygons.tau_degrees"),
            ("[voxel]\ntile_size = 4", "voxel.tile_size"),
            (
                "[polygons]\nmin_island_area = -1.0",
                "polygons.min_island_area",
            ),
            (
                "[polygons]\nreachable_from = [[1.0, 2.0, 3.0], [nan, 0.0, 0.0]]",
                "polygons.reachable_from",
            ),
            (
                "[polygons]\nreachable_from = [[0.0, inf, 0.0]]",
                "polygons.reachable_from",
            ),
        ];
        for (text, field) in cases {
            let err = BakeConfig::from_toml(text, "test.toml")
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(field) && err.contains("test.toml"),
                "{text}: {err}"
            );
        }
        let err = BakeConfig::from_toml("[voxel]\ncel_size = 1.0", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cel_size"), "{err}");
        let err = BakeConfig::from_toml("[polygons]\nportal_removal = 1", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("portal_removal"), "{err}");
        assert!(BakeConfig::load("no-such-preset")
            .unwrap_err()
            .to_string()
            .contains("recast-demo"));
    }

    #[test]
    fn a_config_that_is_a_folder_a_missing_file_or_a_fraction_of_a_tile_says_so() {
        // A folder is not an unknown preset.
        let dir = std::env::temp_dir();
        let spec = dir.to_str().unwrap();
        let err = BakeConfig::load(spec).unwrap_err().to_string();
        assert!(err.contains(spec) && err.contains("a folder"), "{err}");
        assert!(!err.contains("preset"), "{err}");
        // A path to no file, or a `.toml` name, is a missing file.
        for spec in ["/no/such/dir/bake.toml", "mine.toml"] {
            let err = BakeConfig::load(spec).unwrap_err().to_string();
            assert!(err.contains(spec) && err.contains("no such file"), "{err}");
        }
        // A tile size that is neither: said without serde's internal type names.
        let err = BakeConfig::from_toml("[voxel]\ntile_size = 12.5", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("voxel.tile_size") && err.contains("whole number"),
            "{err}"
        );
        assert!(!err.contains("untagged") && !err.contains("Raw"), "{err}");
    }

    #[test]
    fn areas_are_checked_and_give_their_ids() {
        let ok =
            "[[areas]]\nmatch = [\"Ocean*\", \"water*\"]\nname = \"water\"\nwalkable = false\n\
                  [[areas]]\nmatch = [\"road*\"]\nname = \"road\"\ncost = 0.8\n";
        let c = BakeConfig::from_toml(ok, "t.toml").unwrap();
        assert_eq!(c.areas.len(), 2);
        assert_eq!((c.areas[1].cost, c.areas[1].walkable), (0.8, true));
        // Only water (id 1) is blocked; the areas reach the polygon stage's key.
        assert_eq!(c.voxel_params().blocked_areas, 1 << 1);
        assert_eq!(c.polygon_params().areas, c.areas);
        // The effective config keeps them, under `match`.
        let again = BakeConfig::from_toml(&c.to_toml(), "again").unwrap();
        assert_eq!(again, c);
        assert!(c.to_toml().contains("match = ["));
        let area = |body: &str| format!("[[areas]]\n{body}\n");
        let bad = [
            area("match = [\"x\"]\nname = \"default\""),
            area("match = []\nname = \"a\""),
            area("match = [\"\"]\nname = \"a\""),
            area("match = [\"x\"]\nname = \"\""),
            area("match = [\"x\"]\nname = \"a\"\ncost = 0.0"),
            area("match = [\"x\"]\nname = \"a\"\ncost = inf"),
            area("match = [\"x\"]\nname = \"a\"") + &area("match = [\"y\"]\nname = \"a\""),
            (0..64)
                .map(|i| area(&format!("match = [\"m{i}\"]\nname = \"a{i}\"")))
                .collect(),
        ];
        for text in bad {
            let err = BakeConfig::from_toml(&text, "t.toml")
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("areas") && err.contains("t.toml"),
                "{text}: {err}"
            );
        }
        let err = BakeConfig::from_toml(&area("name = \"a\""), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("match"), "{err}");
    }

    #[test]
    fn segmentation_modes() {
        assert_eq!(
            BakeConfig::preset("default").unwrap().regions.mode,
            SegmentationMode::Surface
        );
        assert_eq!(
            BakeConfig::default().regions.mode,
            SegmentationMode::Surface
        );
        for paper in ["def", "S2", "S3", "S4", "S5"] {
            assert_eq!(
                BakeConfig::preset(paper).unwrap().regions.mode,
                SegmentationMode::Flat,
                "{paper}"
            );
        }
        let p = BakeConfig::preset("default").unwrap().voxel_params();
        assert_eq!(p.region_step, 11); // 0.5 m climb over 0.05 m layers, plus one
        let err = BakeConfig::from_toml("[agent]\nheight = 0.4\nmax_climb = 0.5\n", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("regions.mode"), "{err}");
    }

    #[test]
    fn voxel_units() {
        let p = BakeConfig::preset("def").unwrap().voxel_params();
        assert_eq!(p.walkable_climb, 25); // 0.5 m / 0.02 m
        assert_eq!(p.walkable_height, 100); // 2 m / 0.02 m
    }

    #[test]
    fn polygon_units() {
        let mut c = BakeConfig::preset("default").unwrap();
        let p = c.polygon_params();
        assert_eq!(p.max_error, 0.15 / 0.1);
        assert_eq!(p.portal_climb, 39); // 2 m over 0.05 m layers, less one
        assert_eq!(p.link_reach, 0.4 / 0.1);
        assert_eq!(p.link_climb, 10);
        let d = p.detail.unwrap();
        assert_eq!((d.sample_distance, d.max_error), (1.0 / 0.1, 0.1 / 0.05));
        assert_eq!(d.floor_reach, 20);
        assert_eq!(
            p.partition,
            PartitionParams::Anavmg {
                tau: 0.0,
                portal_removal: true
            }
        );
        // Settings the navmesh does not depend on are left out.
        c.polygons.detail_sample_distance = 0.0;
        c.polygons.partition = Partition::HertelMehlhorn;
        let off = c.polygon_params();
        c.polygons.detail_max_error = 0.5;
        c.polygons.tau_degrees = 10.0;
        c.polygons.portal_removal = false;
        assert_eq!(c.polygon_params(), off);
        assert_eq!(off.detail, None);
        // The tile size is not a polygon setting.
        c.voxel.tile_size = 17.into();
        assert_eq!(c.polygon_params(), off);
    }

    #[test]
    fn auto_tiles_are_evened_out_over_the_world() {
        assert_eq!(even_tile_edge(833, 256), 209);
        assert_eq!(even_tile_edge(3334, 256), 239);
        assert_eq!(even_tile_edge(512, 256), 256);
        assert_eq!(even_tile_edge(100, 256), 100);
        for cells in 1..2000 {
            let edge = even_tile_edge(cells, 256);
            let tiles = cells.div_ceil(edge);
            assert!(edge <= 256 && tiles == cells.div_ceil(256), "{cells}");
            // The last tile is the narrowest, by at most a cell per tile.
            assert!(
                cells - (tiles - 1) * edge + tiles >= edge,
                "{cells}: {edge}"
            );
        }
    }

    #[test]
    fn auto_tiles_are_256_cells_or_8_bands() {
        let mut c = BakeConfig::default();
        assert_eq!(c.voxel.tile_size, TileSize::Auto);
        assert_eq!(c.voxel_params().tile_size, 256);
        // A 0.6 m radius at 2 cm cells: a band of 33 cells, 264 rounded up to 320.
        c.voxel.cell_size = 0.02;
        c.voxel.cell_height = 0.02;
        c.agent.radius = 0.6;
        assert_eq!(c.voxel_params().band, 33);
        assert_eq!(c.voxel_params().tile_size, 320);
        // Written and read back as `auto`; numbers stay numbers.
        let text = c.to_toml();
        assert!(text.contains("tile_size = \"auto\""), "{text}");
        assert_eq!(BakeConfig::from_toml(&text, "t").unwrap(), c);
        c.voxel.tile_size = 96.into();
        assert_eq!(BakeConfig::from_toml(&c.to_toml(), "t").unwrap(), c);
        assert_eq!(c.voxel_params().tile_size, 96);
        assert_eq!("auto".parse(), Ok(TileSize::Auto));
        assert_eq!("64".parse(), Ok(TileSize::Cells(64)));
        assert!("big".parse::<TileSize>().is_err());
    }

    #[test]
    fn several_agents() {
        let text = "[[agents]]\nname = \"adult\"\n\n[[agents]]\nname = \"child\"\nheight = 1.2\n\
                    radius = 0.25\n\n[[agents]]\nname = \"cart\"\nradius = 1.0\nmax_climb = 0.1\n";
        let c = BakeConfig::from_toml(text, "t").unwrap();
        assert_eq!(c.agents.len(), 3);
        // `agent` is the first; missing settings are the defaults.
        assert_eq!(c.agent, AgentSettings::default());
        let bakes = c.agent_bakes();
        let names: Vec<_> = bakes.iter().map(|(n, _)| n.clone().unwrap()).collect();
        assert_eq!(names, ["adult", "child", "cart"]);
        assert_eq!(bakes[1].1.agent.height, 1.2);
        assert_eq!(bakes[2].1.agent.max_climb, 0.1);
        // One grid for all: the cart's band (10 + 3 cells) around every agent's tiles; each
        // agent erodes by its own radius.
        for (_, b) in &bakes {
            assert_eq!(b.voxel_params().band, 13);
        }
        assert_eq!(bakes[1].1.voxel_params().walkable_radius, 3);
        // Written without `[agent]`, read back the same.
        let written = c.to_toml();
        assert!(!written.contains("[agent]"), "{written}");
        assert_eq!(BakeConfig::from_toml(&written, "t").unwrap(), c);
        // One agent alone: its own bake, no name.
        let one = BakeConfig::default().agent_bakes();
        assert_eq!(one.len(), 1);
        assert!(one[0].0.is_none());

        let fails = |text: &str, field: &str, says: &str| {
            let e = BakeConfig::from_toml(text, "t").unwrap_err().to_string();
            assert!(e.contains(field) && e.contains(says), "{text}: {e}");
        };
        fails(
            "[agent]\nheight = 1.0\n[[agents]]\nname = \"a\"",
            "`agent`",
            "not both",
        );
        fails("[[agents]]\nheight = 1.0", "`agents`", "a name has");
        fails("[[agents]]\nname = \"a b\"", "`agents`", "a name has");
        fails(
            "[[agents]]\nname = \"a\"\n[[agents]]\nname = \"a\"",
            "`agents`",
            "taken",
        );
        // A setting out of range names the agent and the field.
        fails(
            "[[agents]]\nname = \"a\"\n[[agents]]\nname = \"b\"\nmax_slope = 95.0",
            "agent `b`",
            "agent.max_slope",
        );
        fails("[[agents]]\nname = \"a\"\nspeed = 2.0", "t", "speed");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("1.5 GiB").unwrap(), 3 << 29);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
    }
}
