//! `tessera._tessera`: the native half of the Python package. `bake` runs `tessera bake`
//! (through `tessera_cli::embed`, so the folder and the failures are the command line's),
//! `NavMesh` opens a navmesh file and answers queries in scene coordinates (through
//! `tessera_query`, so a path is what `tessera path --json` prints), with arrays as NumPy
//! arrays. The GIL is released while a bake or a query runs.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{unbounded, RecvTimeoutError};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tessera_cli::embed::{self, BakeOptions};
use tessera_cli::exit::{self, Failure};
use tessera_pipeline::{LogFormat, ProgressEvent};
use tessera_query::{QueryFile, Rng};

create_exception!(
    tessera,
    TesseraError,
    PyException,
    "A tessera failure; `exit_code` is the command line's exit code for it."
);
create_exception!(
    tessera,
    BakeError,
    TesseraError,
    "A bake failed: `exit_code` is what `tessera bake` exits with (3 bad input, 4 bad config, \
     5 budget too small, 6 I/O, 7 internal, 75 folder in use, 130 interrupted)."
);
create_exception!(
    tessera,
    NavMeshError,
    TesseraError,
    "A navmesh file could not be used: `exit_code` 3 (missing, corrupt, not a navmesh) or 6 \
     (unreadable)."
);

/// The Python exception for a failure of kind `E`: the message, and `exit_code`.
fn raise<E: pyo3::PyTypeInfo>(py: Python<'_>, failure: Failure) -> PyErr {
    let err = PyErr::from_type(E::type_object(py), exit::message(&failure.error));
    if let Err(e) = err.value(py).setattr("exit_code", failure.code) {
        return e;
    }
    err
}

/// One progress report, owned, on its way to the Python callback.
struct Report {
    event: &'static str,
    stage: String,
    done: u64,
    total: u64,
    message: Option<String>,
    agent: Option<String>,
}

impl From<ProgressEvent<'_>> for Report {
    fn from(e: ProgressEvent<'_>) -> Report {
        Report {
            event: e.kind.name(),
            stage: e.stage.to_string(),
            done: e.done,
            total: e.total,
            message: e.message.map(str::to_string),
            agent: e.agent.map(str::to_string),
        }
    }
}

/// How often the waiting thread looks for Ctrl-C and reports while a bake runs.
const TICK: Duration = Duration::from_millis(50);

/// Bakes `scene` (a path; `None`: the generated demo world) into the folder `out` as
/// `tessera bake` does, and returns the summary (`summary.json`) as a dict.
///
/// `config` is a TOML file or a preset; `threads` 1 to 4096 (default: the machine's cores);
/// `memory_budget` bytes or a size such as "2GiB" (default: half the available memory);
/// `progress` True prints progress on stderr, False prints nothing, and a callable gets each
/// report as a dict (`event`: start, phase, progress, done or warning; `stage`, `done`,
/// `total`, `message`, `agent`: in a bake for several agents the agent whose stage it is,
/// else None), on the calling thread; if it raises, the bake stops and the exception
/// propagates. Ctrl-C stops the bake at its next safe point (KeyboardInterrupt); the same call
/// resumes from its checkpoints. Failures raise BakeError with `exit_code`.
#[pyfunction]
#[pyo3(
    signature = (scene, out, config="default", threads=None, memory_budget=None, progress=None, *, up=None, fresh=false),
    text_signature = "(scene, out, config='default', threads=None, memory_budget=None, progress=True, *, up=None, fresh=False)"
)]
#[allow(clippy::too_many_arguments)]
fn bake(
    py: Python<'_>,
    scene: Option<PathBuf>,
    out: PathBuf,
    config: &str,
    threads: Option<i64>,
    memory_budget: Option<Bound<'_, PyAny>>,
    progress: Option<Bound<'_, PyAny>>,
    up: Option<String>,
    fresh: bool,
) -> PyResult<Py<PyAny>> {
    let memory_budget = match memory_budget {
        None => None,
        Some(v) if v.is_instance_of::<pyo3::types::PyString>() => Some(v.extract::<String>()?),
        Some(v) => Some(v.extract::<u64>()?.to_string()),
    };
    // True (the default) or False, or a callable.
    let (log_format, callback) = match progress {
        None => ("auto", None),
        Some(p) if p.is_callable() => ("quiet", Some(p)),
        Some(p) => (if p.is_truthy()? { "auto" } else { "quiet" }, None),
    };
    let options = BakeOptions {
        scene,
        out_dir: out,
        config: Some(config.to_string()),
        threads,
        memory_budget,
        up,
        fresh,
        log_format: Some(log_format.to_string()),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let (send, receive) = unbounded::<Report>();
    let reporter = callback.as_ref().map(|_| {
        embed::progress_to(
            LogFormat::Quiet,
            Arc::clone(&interrupt),
            move |e| match send.send(Report::from(e)) {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => ControlFlow::Break(()),
            },
        )
    });
    let flag = Arc::clone(&interrupt);
    let worker = std::thread::Builder::new()
        .name("tessera-bake".into())
        .spawn(move || embed::bake(&options, reporter, flag))
        .map_err(|e| PyErr::new::<BakeError, _>(format!("cannot start the bake: {e}")))?;
    // Wait without the GIL; between waits, hand reports to the callback and look for Ctrl-C.
    let mut stopped: Option<PyErr> = None;
    loop {
        match py.detach(|| receive.recv_timeout(TICK)) {
            Ok(report) => {
                if let (Some(f), None) = (&callback, &stopped) {
                    let dict = PyDict::new(py);
                    dict.set_item("event", report.event)?;
                    dict.set_item("stage", report.stage)?;
                    dict.set_item("done", report.done)?;
                    dict.set_item("total", report.total)?;
                    dict.set_item("message", report.message)?;
                    dict.set_item("agent", report.agent)?;
                    if let Err(e) = f.call1((dict,)) {
                        interrupt.store(true, Ordering::Relaxed);
                        stopped = Some(e);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                if worker.is_finished() {
                    break;
                }
                py.detach(|| std::thread::sleep(TICK));
            }
        }
        if stopped.is_none() {
            if let Err(e) = py.check_signals() {
                interrupt.store(true, Ordering::Relaxed);
                stopped = Some(e);
            }
        }
    }
    let result = py
        .detach(|| worker.join())
        .map_err(|_| PyErr::new::<BakeError, _>("the bake panicked (a bug, please report it)"))?;
    if let Some(e) = stopped {
        return Err(e);
    }
    let baked = result.map_err(|f| raise::<BakeError>(py, f))?;
    let text = serde_json::to_string(&baked.summary)
        .map_err(|e| PyErr::new::<BakeError, _>(e.to_string()))?;
    from_json(py, &text)
}

/// A JSON text as Python values.
fn from_json(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// `n` points as an `(n, 3)` float64 array.
fn points_array<'py>(py: Python<'py>, points: &[[f64; 3]]) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<f64> = points.iter().flatten().copied().collect();
    Ok(PyArray1::from_vec(py, flat)
        .reshape([points.len(), 3])?
        .into_any())
}

fn point_array<'py>(py: Python<'py>, p: [f64; 3]) -> Bound<'py, PyAny> {
    PyArray1::from_vec(py, p.to_vec()).into_any()
}

/// A navmesh file, memory-mapped and validated, with its queries. Points are (x, y, z) in the
/// scene's own coordinates and up axis; ends snap onto the mesh within the agent's reach, as
/// `tessera path` snaps them. Share one NavMesh between threads freely: queries release the
/// GIL.
#[pyclass(frozen, module = "tessera")]
struct NavMesh {
    file: Arc<QueryFile>,
    path: PathBuf,
}

#[pymethods]
impl NavMesh {
    /// Opens the navmesh file at `path` (raises NavMeshError when it is missing, unreadable,
    /// corrupt or not a navmesh).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<NavMesh> {
        let file = py
            .detach(|| tessera_cli::navmesh::open(&path))
            .map_err(|f| raise::<NavMeshError>(py, f))?;
        let file = py.detach(|| QueryFile::new(file));
        Ok(NavMesh {
            file: Arc::new(file),
            path,
        })
    }

    /// The navmesh file's path.
    #[getter]
    fn file(&self) -> PathBuf {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "NavMesh({:?}, polygons={})",
            self.path.display().to_string(),
            self.file.query().poly_count()
        )
    }

    /// What `tessera info --json` prints, as a dict.
    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = py.detach(|| {
            tessera_cli::info::describe(&self.path, self.file.file(), self.file.query()).to_string()
        });
        from_json(py, &text)
    }

    /// The point of the mesh nearest to `p` within the box `p ± extent` (scene axes; default:
    /// the agent's reach), as a float64 array of 3; None when nothing is that near.
    #[pyo3(signature = (p, extent=None))]
    fn nearest<'py>(
        &self,
        py: Python<'py>,
        p: [f64; 3],
        extent: Option<[f64; 3]>,
    ) -> Option<Bound<'py, PyAny>> {
        let found = py.detach(|| self.file.query().nearest_scene(p, extent))?;
        Some(point_array(py, found.point))
    }

    /// The height of the mesh's surface at the plan position of `p` (its up coordinate: z,
    /// or y in a Y-up scene), on the floor nearest `p`'s height within the agent's height;
    /// None when no polygon is there.
    fn height(&self, py: Python<'_>, p: [f64; 3]) -> Option<f64> {
        let q = self.file.query();
        let found = py.detach(|| q.surface_scene(p))?;
        let up = match q.frame().up_axis().to_string().as_str() {
            "y" => 1,
            _ => 2,
        };
        Some(found.point[up])
    }

    /// The path from `a` to `b`: a dict with the fields of `tessera path --json` (`found`,
    /// `length`, `link_names`, `links`, `waypoints`), `waypoints` as an (n, 3) float64 array.
    /// `cost` ({name: value}: an area's factor on lengths through it, an off-mesh link's metres
    /// added) and `avoid` ([name, ...]) filter the areas and off-mesh links by name, as
    /// `tessera path --cost` and `--avoid` do; a name the navmesh lacks raises ValueError.
    #[pyo3(signature = (a, b, cost=None, avoid=None))]
    fn path<'py>(
        &self,
        py: Python<'py>,
        a: [f64; 3],
        b: [f64; 3],
        cost: Option<std::collections::BTreeMap<String, f32>>,
        avoid: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let filter = tessera_query::Filter {
            costs: cost.unwrap_or_default().into_iter().collect(),
            avoid: avoid.unwrap_or_default(),
        };
        let query = self.file.query();
        let costs = query
            .costs(&filter)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let planner = tessera_query::Planner::Hierarchical;
        let answer = py.detach(|| query.path_costed(a, b, planner, &costs));
        let dict = PyDict::new(py);
        dict.set_item("found", answer.found)?;
        dict.set_item("length", answer.length)?;
        dict.set_item("link_names", PyList::new(py, &answer.link_names)?)?;
        dict.set_item("links", PyList::new(py, &answer.links)?)?;
        dict.set_item("waypoints", points_array(py, &answer.waypoints)?)?;
        Ok(dict)
    }

    /// Walks the plan segment from `a` (snapped onto the mesh) towards `b` until it reaches
    /// `b` or a wall: a dict with `hit` (a wall stopped it), `t` (the fraction walked),
    /// `point` (where it stopped, on the surface), `normal` (the wall's, in plan, or None) and
    /// `polygons` (walked over); None when `a` is off the mesh.
    fn raycast<'py>(
        &self,
        py: Python<'py>,
        a: [f64; 3],
        b: [f64; 3],
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(ray) = py.detach(|| self.file.query().raycast_scene(a, b)) else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("hit", ray.hit)?;
        dict.set_item("t", ray.t)?;
        dict.set_item("point", point_array(py, ray.point))?;
        dict.set_item("normal", ray.normal.map(|n| point_array(py, n)))?;
        dict.set_item("polygons", PyList::new(py, &ray.polygons)?)?;
        Ok(Some(dict))
    }

    /// `n` random points of the mesh, uniform over its area, as an (n, 3) float64 array: the
    /// same points, in the same order for a seed, as `tessera path --random-pairs N --seed`
    /// draws (pair i is points 2i and 2i + 1).
    #[pyo3(signature = (n, seed=1))]
    fn random_points<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let points = py.detach(|| {
            let mut rng = Rng::new(seed);
            (0..n)
                .map(|_| self.file.query().random_scene(&mut rng).map(|p| p.point))
                .collect::<Option<Vec<_>>>()
        });
        let points = points.ok_or_else(|| {
            PyValueError::new_err("the navmesh has no walkable area to draw from")
        })?;
        points_array(py, &points)
    }

    /// The polygons' corners, scene coordinates: a (vertices, 3) float64 array.
    fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let q = self.file.query();
        let points: Vec<[f64; 3]> = py.detach(|| {
            let mesh = q.mesh();
            (0..mesh.verts.len() as u32)
                .map(|v| q.to_scene(mesh.vert(v)))
                .collect()
        });
        points_array(py, &points)
    }

    /// The polygons as rows of indices into `vertices()`, counter-clockwise seen from above,
    /// padded with -1 to the longest: a (polygons, most corners) int64 array.
    fn polygons<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mesh = self.file.query().mesh();
        let (rows, width) = py.detach(|| {
            let rows: Vec<Vec<i64>> = (0..mesh.polys.len() as u32)
                .map(|p| mesh.poly_vert_ids(p).map(i64::from).collect())
                .collect();
            let width = rows.iter().map(Vec::len).max().unwrap_or(0);
            (rows, width)
        });
        let mut flat = Vec::with_capacity(rows.len() * width);
        for row in &rows {
            flat.extend_from_slice(row);
            flat.resize(flat.len() + width - row.len(), -1);
        }
        Ok(PyArray1::from_vec(py, flat)
            .reshape([rows.len(), width])?
            .into_any())
    }
}

#[pymodule]
fn _tessera(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<NavMesh>()?;
    m.add_function(wrap_pyfunction!(bake, m)?)?;
    m.add("TesseraError", py.get_type::<TesseraError>())?;
    m.add("BakeError", py.get_type::<BakeError>())?;
    m.add("NavMeshError", py.get_type::<NavMeshError>())?;
    Ok(())
}
