// tessera view: the page. Draws the navmesh in its internal frame (Z up, rebased on the
// frame's origin), chunk by chunk: every chunk first at its coarsest level, then the chunks
// near the camera at finer levels. Clicks on the mesh are converted to scene coordinates and
// sent to /api/path. `window.__tessera` exposes the state to tests (loaded, lastPath, ...).

import * as THREE from 'three';
import { OrbitControls } from '/three/OrbitControls.js';

const state = (window.__tessera = {
  loaded: false,      // every chunk has its first wanted level
  idle: false,        // nothing pending now
  chunks: 0,
  requests: 0,
  triangles: 0,
  picks: 0,           // clicks that hit the mesh
  paths: 0,           // answers of /api/path shown
  lastPath: null,
  error: null,
  hiddenAreas: 0,     // bit `id`: the area's polygons are hidden and paths avoid it
});

const $ = (id) => document.getElementById(id);
const MAX_IN_FLIGHT = 4;
// Chunks with at most this many polygons are always drawn in full.
const SMALL_CHUNK = 400;

let meta, renderer, scene, camera, controls;
const groups = {};
const chunks = new Map(); // "cx,cy" -> chunk record
let inFlight = 0;
let needsRender = true;
const picks = [];
let pathObject = null;
const markers = [];

const surfaceMaterial = new THREE.MeshBasicMaterial({
  vertexColors: true,
  side: THREE.DoubleSide,
  // Pushed back a little so that edges, portals and links on the surface stay in front.
  polygonOffset: true,
  polygonOffsetFactor: 1,
  polygonOffsetUnits: 2,
});
const edgeMaterial = new THREE.LineBasicMaterial({ color: 0x4a5560 });
const portalMaterial = new THREE.LineBasicMaterial({ color: 0x28c8e6 });
const linkMaterial = new THREE.LineBasicMaterial({ color: 0xe628c8 });
const tileMaterial = new THREE.LineBasicMaterial({ color: 0xffffff, transparent: true, opacity: 0.18 });
const pathMaterial = new THREE.MeshBasicMaterial({ color: 0xff6d00, depthTest: false, transparent: true, opacity: 0.9 });

// ---- Coordinates: internal (Z up, rebased) <-> scene (its own origin and up axis) ----

function toScene(p) {
  const o = meta.origin;
  const z = [p[0] + o[0], p[1] + o[1], p[2] + o[2]];
  return meta.up === 'y' ? [z[0], z[2], -z[1]] : z;
}

function toInternal(s) {
  const z = meta.up === 'y' ? [s[0], -s[2], s[1]] : s;
  const o = meta.origin;
  return [z[0] - o[0], z[1] - o[1], z[2] - o[2]];
}

// ---- Binary chunks (see crates/viewer/src/chunks.rs) ----

function decodeChunk(buffer) {
  const dv = new DataView(buffer);
  const magic = String.fromCharCode(...new Uint8Array(buffer, 0, 4));
  if (magic !== 'TSCK') throw new Error('not a chunk');
  const h = (k) => dv.getUint32(4 + 4 * k, true);
  const [lod, nv, nt, ne, np, nl] = [h(1), h(2), h(3), h(4), h(5), h(6)];
  let off = 36;
  const take = (Type, n, size) => {
    const a = new Type(buffer, off, n);
    off += n * size;
    return a;
  };
  return {
    lod,
    positions: take(Float32Array, nv * 3, 4),
    indices: take(Uint32Array, nt * 3, 4),
    edges: take(Float32Array, ne * 6, 4),
    portals: take(Float32Array, np * 6, 4),
    links: take(Float32Array, nl * 6, 4),
    colours: take(Uint8Array, nv * 4, 1),
  };
}

function segments(array, material) {
  if (array.length === 0) return null;
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(array, 3));
  return new THREE.LineSegments(g, material);
}

function disposeObject(o) {
  if (!o) return;
  o.parent?.remove(o);
  o.geometry?.dispose();
}

function showChunk(record, data) {
  for (const o of record.objects) disposeObject(o);
  record.objects = [];
  if (data.indices.length > 0) {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(data.positions, 3));
    g.setAttribute('color', new THREE.BufferAttribute(data.colours, 4, true));
    g.setIndex(new THREE.BufferAttribute(data.indices, 1));
    g.computeBoundingSphere();
    const mesh = new THREE.Mesh(g, surfaceMaterial);
    mesh.userData.chunk = record.key;
    groups.surface.add(mesh);
    record.objects.push(mesh);
  }
  for (const [array, material, group] of [
    [data.edges, edgeMaterial, groups.edges],
    [data.portals, portalMaterial, groups.portals],
    [data.links, linkMaterial, groups.links],
  ]) {
    const o = segments(array, material);
    if (o) {
      group.add(o);
      record.objects.push(o);
    }
  }
  state.triangles += data.indices.length / 3 - record.triangles;
  record.triangles = data.indices.length / 3;
  record.lod = data.lod;
  needsRender = true;
}

// ---- Level of detail: which level each chunk wants, given the camera ----

function wantedLod(record) {
  if (record.polys <= SMALL_CHUNK) return 0;
  const p = camera.position;
  const d = record.box.distanceToPoint(p);
  const e = meta.chunk_edge;
  if (d < 1.5 * e) return 0;
  if (d < 5 * e) return 1;
  return meta.lods - 1;
}

function schedule() {
  if (inFlight >= MAX_IN_FLIGHT) return;
  // First every chunk at its first level, nearest first; then refinements, nearest first.
  const todo = [];
  for (const r of chunks.values()) {
    if (r.pending) continue;
    const want = r.lod < 0 ? Math.max(wantedLod(r), r.polys <= SMALL_CHUNK ? 0 : 1) : wantedLod(r);
    if (want !== r.lod) {
      todo.push([r.lod < 0 ? 0 : 1, r.box.distanceToPoint(camera.position), r, want]);
    }
  }
  if (todo.length === 0 && inFlight === 0) {
    state.idle = true;
    if (!state.loaded) {
      state.loaded = true;
      status('');
    }
    return;
  }
  state.idle = false;
  todo.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (const [, , r, want] of todo.slice(0, MAX_IN_FLIGHT - inFlight)) load(r, want);
}

async function load(record, lod) {
  record.pending = true;
  inFlight++;
  state.requests++;
  try {
    const hide = state.hiddenAreas ? `&hide=${state.hiddenAreas}` : '';
    const res = await fetch(`/api/chunk?cx=${record.cx}&cy=${record.cy}&lod=${lod}${hide}`);
    if (!res.ok) throw new Error(`chunk ${record.key}: HTTP ${res.status}`);
    showChunk(record, decodeChunk(await res.arrayBuffer()));
    if (record.first) {
      record.first = false;
      state.chunks++;
    }
  } catch (e) {
    state.error = String(e);
    status(String(e));
    record.lod = lod; // do not ask again in a loop
  } finally {
    record.pending = false;
    inFlight--;
    updateCounts();
    schedule();
  }
}

// ---- Scene overlay, tile grid ----

async function loadScene() {
  const res = await fetch('/api/scene');
  if (!res.ok) return;
  const buffer = await res.arrayBuffer();
  const dv = new DataView(buffer);
  const nv = dv.getUint32(4, true);
  const nt = dv.getUint32(8, true);
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(buffer, 12, nv * 3), 3));
  g.setIndex(new THREE.BufferAttribute(new Uint32Array(buffer, 12 + nv * 12, nt * 3), 1));
  g.computeVertexNormals();
  const m = new THREE.MeshLambertMaterial({
    color: 0xc9ced6, transparent: true, opacity: 0.28, depthWrite: false, side: THREE.DoubleSide,
  });
  groups.scene.add(new THREE.Mesh(g, m));
  needsRender = true;
}

function tileGrid() {
  const edge = meta.tile_edge;
  if (!edge) return;
  const lo = meta.bounds.min, hi = meta.bounds.max;
  const x0 = Math.floor(lo[0] / edge), x1 = Math.ceil(hi[0] / edge);
  const y0 = Math.floor(lo[1] / edge), y1 = Math.ceil(hi[1] / edge);
  // A 2 km world at small tiles: draw every k-th line only.
  const step = Math.max(1, Math.ceil(Math.max(x1 - x0, y1 - y0) / 400));
  const z = lo[2] - 0.05;
  const pts = [];
  for (let x = x0; x <= x1; x += step) pts.push(x * edge, y0 * edge, z, x * edge, y1 * edge, z);
  for (let y = y0; y <= y1; y += step) pts.push(x0 * edge, y * edge, z, x1 * edge, y * edge, z);
  groups.tiles.add(segments(new Float32Array(pts), tileMaterial));
}

// ---- Clicks and paths ----

function marker(p, colour) {
  const size = Math.max(meta.cell_size * 2, meta.agent.radius);
  const m = new THREE.Mesh(
    new THREE.SphereGeometry(size, 16, 12),
    new THREE.MeshBasicMaterial({ color: colour, depthTest: false }),
  );
  m.position.set(p[0], p[1], p[2]);
  m.renderOrder = 10;
  groups.path.add(m);
  markers.push(m);
}

function clearPath() {
  for (const m of markers) disposeObject(m);
  markers.length = 0;
  disposeObject(pathObject);
  pathObject = null;
}

function pick(event) {
  const rect = renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2(
    ((event.clientX - rect.left) / rect.width) * 2 - 1,
    -((event.clientY - rect.top) / rect.height) * 2 + 1,
  );
  const ray = new THREE.Raycaster();
  ray.setFromCamera(ndc, camera);
  const hits = ray.intersectObjects(groups.surface.children, false);
  if (hits.length === 0) {
    status('no navmesh under the pointer');
    return;
  }
  const p = hits[0].point;
  const point = [p.x, p.y, p.z];
  state.picks++;
  if (picks.length === 2) picks.length = 0;
  if (picks.length === 0) clearPath();
  picks.push(point);
  marker(point, picks.length === 1 ? 0x00c853 : 0xd50000);
  needsRender = true;
  if (picks.length === 2) requestPath(picks[0], picks[1]);
  else $('path-info').textContent = 'start set: click the end';
}

async function requestPath(a, b) {
  const from = toScene(a), to = toScene(b);
  const info = $('path-info');
  info.textContent = 'finding a path...';
  try {
    const avoid = (meta.areas || [])
      .filter((_, id) => state.hiddenAreas & (1 << id))
      .map((a) => encodeURIComponent(a.name));
    const also = avoid.length ? `&avoid=${avoid.join(',')}` : '';
    const res = await fetch(`/api/path?from=${from.join(',')}&to=${to.join(',')}${also}`);
    const answer = await res.json();
    if (!res.ok) throw new Error(answer.error || `HTTP ${res.status}`);
    let shown = 0;
    if (answer.found && answer.waypoints.length >= 2) {
      // A tube through the waypoints, lifted a little off the floor, visible through walls.
      const lift = meta.agent.radius * 0.5;
      const curve = new THREE.CurvePath();
      const pts = answer.waypoints.map((w) => {
        const p = toInternal(w);
        return new THREE.Vector3(p[0], p[1], p[2] + lift);
      });
      for (let k = 1; k < pts.length; k++) curve.add(new THREE.LineCurve3(pts[k - 1], pts[k]));
      const radius = Math.max(meta.cell_size, meta.agent.radius * 0.25);
      const g = new THREE.TubeGeometry(curve, 8 * (pts.length - 1), radius, 8, false);
      pathObject = new THREE.Mesh(g, pathMaterial);
      pathObject.renderOrder = 9;
      groups.path.add(pathObject);
      shown = answer.waypoints.length;
    }
    info.className = answer.found ? '' : 'none';
    info.textContent = answer.found
      ? `path ${answer.length.toFixed(3)} m, ${answer.waypoints.length} waypoints`
      : 'no path (an end is off the mesh, or nothing joins them)';
    state.lastPath = { from, to, found: answer.found, length: answer.length,
      waypoints: answer.waypoints, shown };
    state.paths++;
  } catch (e) {
    info.className = 'none';
    info.textContent = `path query failed: ${e}`;
    state.error = String(e);
  }
  needsRender = true;
}

// For tests: each layer's visibility and number of drawn objects.
state.layers = () => Object.fromEntries(
  Object.entries(groups).map(([name, g]) => [name, { visible: g.visible, objects: g.children.length }]),
);

// For tests: an internal-frame point in CSS pixels of the page.
state.project = (x, y, z) => {
  const v = new THREE.Vector3(x, y, z).project(camera);
  const rect = renderer.domElement.getBoundingClientRect();
  return [rect.left + ((v.x + 1) / 2) * rect.width, rect.top + ((1 - v.y) / 2) * rect.height];
};

// ---- Panel ----

function status(text) {
  $('status').textContent = text;
}

function updateCounts() {
  const n = meta.chunks.length;
  let full = 0;
  for (const r of chunks.values()) if (r.lod === 0) full++;
  $('counts').textContent =
    `${meta.polygons} polygons, ${meta.regions} regions, ${meta.links} links; ` +
    `chunks ${state.chunks}/${n} loaded (${full} in full), ${state.triangles} triangles drawn`;
}

function toggles() {
  const bind = (id, apply) => {
    const box = $(id);
    const run = () => { apply(box.checked); needsRender = true; };
    box.addEventListener('change', run);
    run();
  };
  bind('show-regions', (on) => {
    surfaceMaterial.vertexColors = on;
    surfaceMaterial.color.set(on ? 0xffffff : 0x9aa4ad);
    surfaceMaterial.needsUpdate = true;
  });
  bind('show-edges', (on) => { groups.edges.visible = on; });
  bind('show-portals', (on) => { groups.portals.visible = on; });
  bind('show-links', (on) => { groups.links.visible = on; });
  bind('show-tiles', (on) => { groups.tiles.visible = on; });
  bind('show-scene', (on) => { groups.scene.visible = on; });
  areaToggles();
  if (!meta.tile_edge) {
    $('show-tiles').disabled = true;
    $('tiles-label').className = 'off';
    $('tiles-label').title = 'this navmesh file does not record its tile size';
  }
  if (!meta.scene) {
    $('show-scene').disabled = true;
    $('scene-label').className = 'off';
    $('scene-label').title = 'start with --scene SCENE for an overlay';
  }
}

// One box per walkable area when the mesh has more than `default`: unticked, the area's
// polygons are reloaded without it and paths keep out of it.
function areaToggles() {
  const areas = meta.areas || [];
  if (areas.length < 2) return;
  const row = $('areas');
  areas.forEach((a, id) => {
    if (!a.walkable || id >= 31) return;
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.id = `area-${id}`;
    label.append(box, ` ${a.name}`);
    label.title = `cost ${a.cost}`;
    row.append(label);
    box.addEventListener('change', () => {
      state.hiddenAreas = box.checked ? state.hiddenAreas & ~(1 << id) : state.hiddenAreas | (1 << id);
      for (const r of chunks.values()) r.lod = -1;
      needsRender = true;
      schedule();
    });
  });
}

// ---- Start ----

async function main() {
  const res = await fetch('/api/meta');
  meta = await res.json();
  state.meta = meta;
  $('name').textContent = meta.file || '';

  const view = $('view');
  renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio);
  renderer.setSize(view.clientWidth, view.clientHeight);
  view.appendChild(renderer.domElement);

  scene = new THREE.Scene();
  scene.background = new THREE.Color(0x20242a);
  scene.add(new THREE.AmbientLight(0xffffff, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.4);
  sun.position.set(0.4, -0.6, 1);
  scene.add(sun);
  for (const name of ['scene', 'surface', 'edges', 'portals', 'links', 'tiles', 'path']) {
    groups[name] = new THREE.Group();
    scene.add(groups[name]);
  }

  const lo = new THREE.Vector3(...meta.bounds.min), hi = new THREE.Vector3(...meta.bounds.max);
  const centre = lo.clone().add(hi).multiplyScalar(0.5);
  const size = Math.max(hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, 1);
  camera = new THREE.PerspectiveCamera(45, view.clientWidth / view.clientHeight, size / 2000, size * 20);
  camera.up.set(0, 0, 1);
  camera.position.set(centre.x, centre.y - 0.75 * size, centre.z + 0.95 * size);
  controls = new OrbitControls(camera, renderer.domElement);
  controls.target.copy(centre);
  controls.update();
  controls.addEventListener('change', () => { needsRender = true; });

  for (const [cx, cy, polys, min, max] of meta.chunks) {
    const key = `${cx},${cy}`;
    chunks.set(key, {
      key, cx, cy, polys, lod: -1, pending: false, first: true, objects: [], triangles: 0,
      box: new THREE.Box3(new THREE.Vector3(...min), new THREE.Vector3(...max)),
    });
  }
  toggles();
  tileGrid();
  updateCounts();
  if (meta.scene) loadScene();

  // Clicks that are not drags pick points.
  let down = null;
  renderer.domElement.addEventListener('pointerdown', (e) => { down = [e.clientX, e.clientY, e.button]; });
  renderer.domElement.addEventListener('pointerup', (e) => {
    if (!down || e.button !== 0 || down[2] !== 0) return;
    const moved = Math.hypot(e.clientX - down[0], e.clientY - down[1]);
    down = null;
    if (moved <= 4) pick(e);
  });
  window.addEventListener('resize', () => {
    camera.aspect = view.clientWidth / view.clientHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(view.clientWidth, view.clientHeight);
    needsRender = true;
  });

  status('loading chunks...');
  if (meta.chunks.length === 0) status('the navmesh has no polygon');
  let lastSchedule = 0;
  const frame = (t) => {
    if (t - lastSchedule > 150) {
      lastSchedule = t;
      schedule();
    }
    if (needsRender) {
      needsRender = false;
      renderer.render(scene, camera);
      state.frames = (state.frames || 0) + 1;
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

main().catch((e) => {
  state.error = String(e);
  status(`failed: ${e}`);
});
