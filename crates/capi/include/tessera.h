/*
 * tessera's C API: open a navmesh and query it from any number of threads, and bake a scene
 * as `tessera bake` does. Link libtessera (libtessera.a or libtessera.so, from
 * `cargo build --release -p tessera-capi`); see README.md, "Using tessera from C".
 *
 * Made by cbindgen from crates/capi/src: do not edit.
 *
 * Handles: a TesseraNavMesh is immutable and shared by any number of threads; each thread
 * makes its own TesseraQuery over it. Points are three doubles in the scene's own coordinates
 * and up axis. Every function that can fail returns a TesseraStatus (the command line's exit
 * code for the same failure) and tessera_last_error() says why. A caller's buffer comes with
 * its capacity in items and nothing is written past it: what did not fit is counted, and the
 * call returns TESSERA_BUFFER_TOO_SMALL. A buffer not wanted is NULL with capacity 0.
 */

#ifndef TESSERA_H
#define TESSERA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A stage begins (`total`: its unit count, 0 when unknown).
#define TESSERA_PROGRESS_START 0

// A stage begins a step of its own, named in `message`; counts restart.
#define TESSERA_PROGRESS_PHASE 1

// `done` units of `total` are finished (at most every 100 ms per stage).
#define TESSERA_PROGRESS_ADVANCE 2

// The stage is finished.
#define TESSERA_PROGRESS_DONE 3

// A warning (in `message`) that does not stop the bake.
#define TESSERA_PROGRESS_WARNING 4

// "No polygon": the polygon of a point that was not found.
#define TESSERA_NO_POLYGON UINT32_MAX

// A cancel flag for bakes, raised from any thread (a signal handler included). Once raised it
// stays raised: a bake given it stops at its next safe point (within a second) and returns
// `TESSERA_INTERRUPTED`; make a new one for the next bake.
typedef struct TesseraCancel TesseraCancel;

// An open navmesh file: memory-mapped, validated, immutable. Shared by any number of threads.
typedef struct TesseraNavMesh TesseraNavMesh;

// Queries over a navmesh, for one thread at a time (make one per thread).
typedef struct TesseraQuery TesseraQuery;

// One progress report; its strings live for the call only.
typedef struct TesseraProgress {
  // One of the `TESSERA_PROGRESS_` kinds.
  int32_t kind;
  // The stage: "ingest", "bin", "voxelize", "merge", "polygons", "preview" ("" for a
  // warning).
  const char *stage;
  uint64_t done;
  uint64_t total;
  // A phase's name or a warning's text; NULL otherwise.
  const char *message;
  // In a bake for several agents (`[[agents]]`), the agent whose stage it is; NULL for a
  // stage all agents share, and in a bake for one.
  const char *agent;
} TesseraProgress;

// Called with each progress report, from the bake's threads but never two calls at once.
// Returning non-zero cancels the bake (it then returns `TESSERA_INTERRUPTED`). NULL: none.
typedef int32_t (*TesseraProgressFn)(void *user, const struct TesseraProgress *progress);

// What to bake, as `tessera bake`'s arguments of the same names. Start from
// `tessera_bake_options_default()` and set what differs.
typedef struct TesseraBakeOptions {
  // The scene file (.obj, .gltf, .glb); NULL bakes the generated demo world.
  const char *scene;
  // The output folder (required): navmesh.tsn, summary.json, config.toml, preview.png,
  // report.html, and the checkpoints a later bake resumes from.
  const char *out_dir;
  // A config file or a preset (default, def, S2..S5, recast-demo); NULL: "default".
  const char *config;
  // Worker threads, 1 to 4096; 0: the machine's cores.
  uint32_t threads;
  // Memory budget in bytes; 0: half the available memory.
  uint64_t memory_budget;
  // The scene's up axis, "y" or "z"; NULL: z for OBJ, y for glTF.
  const char *up;
  // Ignore (and remove) existing checkpoints.
  bool fresh;
  // Progress reports, or NULL.
  TesseraProgressFn progress;
  // Handed back to `progress`.
  void *progress_user;
  // A cancel flag, or NULL.
  const struct TesseraCancel *cancel;
} TesseraBakeOptions;

// What a call did: `TESSERA_OK` or why it failed. The codes are the command line's exit codes
// for the same failures, so a bake through the C API reports as `tessera bake` exits.
typedef int32_t TesseraStatus;

// A point of the mesh, or none.
typedef struct TesseraPoint {
  // Whether there is such a point; when false, `polygon` is `TESSERA_NO_POLYGON` and
  // `point` is zero.
  bool found;
  // The polygon it lies on.
  uint32_t polygon;
  // Scene coordinates.
  double point[3];
} TesseraPoint;

// What `tessera_query_find_path` found; the counts are whole even when a buffer was short.
typedef struct TesseraPath {
  // Whether both ends snapped onto the mesh and a path joins them (`tessera path`'s
  // `found`).
  bool found;
  // The sum of the 3D lengths of the path's segments (0 when not found).
  double length;
  // Polygons in the corridor, start polygon first. When no path joins the ends: the
  // corridor towards the polygon reached nearest the end; 0 when an end is off the mesh.
  size_t corridor_count;
  // Waypoints of the straight path (three doubles each), start first and end last.
  size_t waypoint_count;
  // Link steps: indices `i` such that waypoint `i` to `i + 1` crosses a link (a stair
  // link, or an off-mesh link from take-off to landing).
  size_t link_count;
} TesseraPath;

// What `tessera_query_raycast` found.
typedef struct TesseraRaycast {
  // Whether the start lies on the mesh (snapped as a path's ends are); when false nothing
  // was walked and the rest is zero.
  bool started;
  // Whether a wall (an edge with no polygon across) stopped the walk before the end.
  bool hit;
  // The fraction of the plan segment from the (snapped) start to the end walked: 1 when
  // the end was reached.
  double t;
  // Where the walk stopped, on the mesh's surface, scene coordinates.
  double point[3];
  // The wall's normal in plan, pointing out of the mesh, scene axes (zero when no wall).
  double normal[3];
  // Polygons walked over, start polygon first.
  size_t polygon_count;
} TesseraRaycast;

// Success.
#define TESSERA_OK 0

// A bad argument: a NULL or misaligned pointer, a number out of range, an option the
// command line would refuse (its exit code 2).
#define TESSERA_INVALID_ARGUMENT 2

// Bad input: a scene or navmesh file missing, malformed, corrupt or not valid; nothing
// walkable; a world too large.
#define TESSERA_BAD_INPUT 3

// A bad config: a field out of its limits, an unknown preset.
#define TESSERA_BAD_CONFIG 4

// The memory budget is too small for one tile.
#define TESSERA_OVER_BUDGET 5

// An I/O failure: a file that exists but cannot be read, a full disk, a corrupt checkpoint,
// threads the system refused.
#define TESSERA_IO 6

// An internal error (a bug: please report it), a panic caught at the boundary included.
#define TESSERA_INTERNAL 7

// A buffer was too small: it holds what fitted, and the result counts everything.
#define TESSERA_BUFFER_TOO_SMALL 10

// The output folder is in use by another bake.
#define TESSERA_BUSY 75

// The bake was cancelled; its checkpoints are intact and the same bake resumes from them.
#define TESSERA_INTERRUPTED 130

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Options with every field at its default (all NULL or zero).
struct TesseraBakeOptions tessera_bake_options_default(void);

// A new cancel flag, lowered. Free it with `tessera_cancel_free` once no bake uses it.
struct TesseraCancel *tessera_cancel_new(void);

// Raises the flag (NULL: nothing).
void tessera_cancel_request(const struct TesseraCancel *cancel);

// Frees a cancel flag (NULL: nothing).
void tessera_cancel_free(struct TesseraCancel *cancel);

// Bakes as `tessera bake` does: the same files in the output folder, the same checks of the
// options (a value the command line refuses is `TESSERA_INVALID_ARGUMENT`, naming it), and
// the command line's exit code as the status on failure. Progress goes to the callback only
// (nothing is printed); the bake stops when the cancel flag is raised or the callback
// answers non-zero. No signal handler is installed.
TesseraStatus tessera_bake(const struct TesseraBakeOptions *options);

// The message of the calling thread's last call to a tessera function that returns a status:
// why it failed, or "" when it succeeded. Never NULL. Valid until that thread's next such call.
const char *tessera_last_error(void);

// tessera's version, e.g. "0.1.0". A static string.
const char *tessera_version(void);

// Opens the navmesh file at `path` (memory-mapped, checked: header, checksum, structure,
// indices) and sets `*mesh` to it, or to NULL on failure (`TESSERA_BAD_INPUT` for a missing
// or invalid file, `TESSERA_IO` for one that cannot be read). Close it with
// `tessera_navmesh_close`.
TesseraStatus tessera_navmesh_open(const char *path, struct TesseraNavMesh **mesh);

// Closes a navmesh (NULL: nothing). Query objects made over it stay usable.
void tessera_navmesh_close(struct TesseraNavMesh *mesh);

// Writes what `tessera info --json` prints for the navmesh (one JSON object, NUL-terminated)
// into `buffer` of `capacity` bytes, and its length without the NUL into `*length`. A
// buffer shorter than the length plus one gets `TESSERA_BUFFER_TOO_SMALL` (and as much as
// fits, NUL-terminated); NULL with capacity 0 asks for the length alone.
TesseraStatus tessera_navmesh_info_json(const struct TesseraNavMesh *mesh,
                                        char *buffer,
                                        size_t capacity,
                                        size_t *length);

// Makes a query object over `mesh` for one thread, its random points drawn from `seed`, and
// sets `*query` to it (NULL on failure). Free it with `tessera_query_free`.
TesseraStatus tessera_query_new(const struct TesseraNavMesh *mesh,
                                uint64_t seed,
                                struct TesseraQuery **query);

// Frees a query object (NULL: nothing).
void tessera_query_free(struct TesseraQuery *query);

// The point of the mesh nearest to `point` (three doubles) within the box `point ± extent`
// (three doubles, scene axes; NULL: the agent's reach, as a path's ends snap).
TesseraStatus tessera_query_nearest(struct TesseraQuery *query,
                                    const double *point,
                                    const double *extent,
                                    struct TesseraPoint *result);

// The mesh's surface at the plan position of `point`: of the polygons over or under it, the
// one whose surface is nearest `point`'s height, within the agent's height. The result's
// point is `point` moved onto that surface (its up coordinate is the height).
TesseraStatus tessera_query_height(struct TesseraQuery *query,
                                   const double *point,
                                   struct TesseraPoint *result);

// A random point of the mesh, uniform over its area, from the query object's generator: the
// same points in the same order for a seed as `tessera path --random-pairs --seed` draws.
// Not found only on a mesh with no area.
TesseraStatus tessera_query_random_point(struct TesseraQuery *query, struct TesseraPoint *result);

// The path between scene points `from` and `to`, as `tessera path --json` answers it: its
// corridor (polygon ids) into `corridor`, its waypoints (three doubles each) into
// `waypoints`, its link steps into `links`, each of the given capacity in items (NULL with
// capacity 0: not wanted), and the whole counts, `found` and the length into `*result`.
// `TESSERA_BUFFER_TOO_SMALL` when a buffer given could not hold its part.
TesseraStatus tessera_query_find_path(struct TesseraQuery *query,
                                      const double *from,
                                      const double *to,
                                      uint32_t *corridor,
                                      size_t corridor_capacity,
                                      double *waypoints,
                                      size_t waypoint_capacity,
                                      uint32_t *links,
                                      size_t link_capacity,
                                      struct TesseraPath *result);

// The name of link step `k` of the last path `tessera_query_find_path` found with this query
// object (`"stair"` for a step the bake found, else the off-mesh link's name), as `tessera
// path --json` lists them in `link_names`; NULL when `k` is not below its `link_count` (or
// `query` is NULL). The string lives until the next call on this query object.
const char *tessera_query_link_name(const struct TesseraQuery *query, size_t k);

// Makes the area named `name` cost `cost` (a factor on the length walked through it, > 0),
// or the off-mesh links named `name` cost `cost` (metres added to their length, >= 0),
// instead of the baked cost in this query object's paths, as `tessera path --cost` does.
// `TESSERA_INVALID_ARGUMENT` when the navmesh has no area or link of that name (the message
// lists the names it has) or the cost is out of range; the filter is then unchanged.
TesseraStatus tessera_query_set_cost(struct TesseraQuery *query, const char *name, double cost);

// Makes this query object's paths never enter the area, or take the off-mesh links, named
// `name`, as `tessera path --avoid` does. `TESSERA_INVALID_ARGUMENT` when the navmesh has no
// area or link of that name.
TesseraStatus tessera_query_avoid(struct TesseraQuery *query, const char *name);

// Gives this query object the baked costs back (no area or link costed or avoided).
TesseraStatus tessera_query_clear_filter(struct TesseraQuery *query);

// Walks the plan segment from `from` (snapped onto the mesh) towards `to` over the mesh until
// it reaches `to` or a wall (Detour's raycast): where it stopped, the wall's normal, and the
// polygons walked over into `polygons` (capacity in items; NULL with 0: not wanted).
TesseraStatus tessera_query_raycast(struct TesseraQuery *query,
                                    const double *from,
                                    const double *to,
                                    uint32_t *polygons,
                                    size_t polygon_capacity,
                                    struct TesseraRaycast *result);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* TESSERA_H */
