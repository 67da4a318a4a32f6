#!/usr/bin/env python3
"""Incremental rebakes of citygen L against a fresh bake (benches/RESULTS-rebake.md).

The city is written as 16 district files (`citygen --size L --seed 7 --split 4`) and one
district file is edited between bakes, the way an artist's change reaches a farm:

  box   a 6 x 5 x 4 m box appended at the middle of `city-L-2-2.obj`, on its lowest floor;
  move  the building nearest that middle (its faces off the ground, joined by shared corner
        positions) moved 3 m in x.

Each edit is written beside the file and renamed over it, and taken away again the same way,
so every rebake is of a real change.

  ratio  a fresh bake of the city, then ROUNDS rebakes with the edit and ROUNDS without it,
         in turn, into the same folder, REPEAT times; prints the summary totals, the median
         rebake over the median fresh bake (issue 19's bar: at most 0.05), and the peak RSS.
  ab     two builds A and B, each baking into a folder of its own, alternated and swapping
         which goes first every round (a fixed order flatters the second build); both folders
         are brought to the unedited city first, unmeasured. Prints each build's median
         summary total, polygon stage, wall and CPU time, and whether the navmeshes match.

  python3 benches/rebake.py ratio --tessera target/release/tessera \\
      --citygen target/release/citygen --work /tmp/rebake --edit box --rounds 4
  python3 benches/rebake.py ab --tessera OLD --tessera-b NEW --citygen ... --rounds 12

Standard library only; the folder given as --work holds the city and the bakes.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

DISTRICT = "city-L-2-2.obj"


def write_replacing(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def parse_obj(text):
    verts, vline, faces = [], [], []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("v "):
            p = line.split()
            verts.append((float(p[1]), float(p[2]), float(p[3])))
            vline.append(i)
        elif line.startswith("f "):
            faces.append([int(t.split("/")[0]) - 1 for t in line.split()[1:]])
    return lines, verts, vline, faces


def with_box(text):
    _, verts, _, _ = parse_obj(text)
    xs = [v[0] for v in verts]
    ys = [v[1] for v in verts]
    z0 = min(v[2] for v in verts)
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    x0, x1, y0, y1, z1 = cx - 3, cx + 3, cy - 2.5, cy + 2.5, z0 + 4
    corners = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
               (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    faces = [(5, 6, 7), (5, 7, 8), (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6),
             (3, 4, 8), (3, 8, 7), (4, 1, 5), (4, 5, 8)]
    n = len(verts)
    out = text if text.endswith("\n") else text + "\n"
    out += "".join("v %.4f %.4f %.4f\n" % c for c in corners)
    out += "".join("f %d %d %d\n" % tuple(n + k for k in f) for f in faces)
    return out


def with_building_moved(text, dx=3.0):
    lines, verts, vline, faces = parse_obj(text)
    zs = sorted(v[2] for v in verts)
    ground = zs[len(zs) // 10]
    parent = list(range(len(verts)))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def union(a, b):
        a, b = find(a), find(b)
        if a != b:
            parent[b] = a

    at = {}
    for i, v in enumerate(verts):
        key = tuple(round(c, 3) for c in v)
        if key in at:
            union(at[key], i)
        else:
            at[key] = i
    off_ground = [f for f in faces if max(verts[v][2] for v in f) > ground + 0.3]
    for f in off_ground:
        for v in f[1:]:
            union(f[0], v)
    parts = {}
    for f in off_ground:
        parts.setdefault(find(f[0]), []).append(f)
    xs = [v[0] for v in verts]
    ys = [v[1] for v in verts]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    best = None
    for root, fs in parts.items():
        vs = {v for f in fs for v in f}
        bx = [verts[i][0] for i in vs]
        by = [verts[i][1] for i in vs]
        bz = [verts[i][2] for i in vs]
        if 6 < max(bx) - min(bx) < 60 and 6 < max(by) - min(by) < 60 and max(bz) - min(bz) > 5:
            d = (sum(bx) / len(bx) - cx) ** 2 + (sum(by) / len(by) - cy) ** 2
            if best is None or d < best[0]:
                best = (d, root)
    if best is None:
        sys.exit("no building found in " + DISTRICT)
    for i in {v for f in parts[best[1]] for v in f}:
        x, y, z = verts[i]
        lines[vline[i]] = "v %.4f %.4f %.4f" % (x + dx, y, z)
    return "\n".join(lines) + "\n"


def prepare(args):
    """The split city in WORK/split, and the district file with and without the edit."""
    split = os.path.join(args.work, "split")
    scenes = os.path.join(split, "city-L.scenes")
    if not os.path.exists(scenes):
        os.makedirs(split, exist_ok=True)
        subprocess.run([args.citygen, "--size", "L", "--seed", "7", "--split", "4",
                        "--out", os.path.join(split, "city-L.obj")], check=True)
    original = os.path.join(args.work, DISTRICT + ".original")
    if not os.path.exists(original):
        with open(os.path.join(split, DISTRICT)) as f:
            write_replacing(original, f.read())
    with open(original) as f:
        text = f.read()
    edited = with_box(text) if args.edit == "box" else with_building_moved(text)
    return scenes, {"original": text, "edited": edited}


def bake(tessera, scenes, out, threads):
    """One bake; its summary, and its wall and CPU seconds (user + sys of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([tessera, "bake", "--scene-list", scenes, "--out", out,
                    "--threads", str(threads), "--log-format", "quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f), wall, cpu


def ratio(args):
    scenes, texts = prepare(args)
    district = os.path.join(os.path.dirname(scenes), DISTRICT)
    out = os.path.join(args.work, "bake")
    fresh, totals, peaks = [], [], []
    fresh_walls, walls = [], []
    for _ in range(args.repeat):
        subprocess.run(["rm", "-rf", out], check=True)
        write_replacing(district, texts["original"])
        s, wall, _ = bake(args.tessera, scenes, out, args.threads)
        fresh.append(s["seconds"]["total"])
        fresh_walls.append(wall)
        mine = []
        for _ in range(args.rounds):
            for which in ("edited", "original"):
                write_replacing(district, texts[which])
                s, wall, _ = bake(args.tessera, scenes, out, args.threads)
                mine.append(s["seconds"]["total"])
                walls.append(wall)
                peaks.append(s["peak_rss_bytes"])
                print("%-8s total %.3f s, %d tiles rebaked, %d regions rebaked" % (
                    which, mine[-1], s["tiles_rebaked"], s["regions_rebaked"]))
        print("fresh %.2f s; rebakes median %.3f s; ratio %.4f" % (
            fresh[-1], statistics.median(mine), statistics.median(mine) / fresh[-1]))
        totals += mine
    median = statistics.median(totals)
    print("fresh bakes %s s (median %.2f); %d rebakes median %.3f s (%.3f-%.3f); "
          "ratio %.4f; peak RSS %.1f MiB" % (
              " ".join("%.2f" % f for f in fresh), statistics.median(fresh), len(totals),
              median, min(totals), max(totals), median / statistics.median(fresh),
              max(peaks) / 2**20))
    # The command's whole run (process start to exit, preview and report included) both ways.
    print("wall: fresh bakes median %.2f s; rebakes median %.3f s; ratio %.4f" % (
        statistics.median(fresh_walls), statistics.median(walls),
        statistics.median(walls) / statistics.median(fresh_walls)))


def ab(args):
    scenes, texts = prepare(args)
    district = os.path.join(os.path.dirname(scenes), DISTRICT)
    builds = {"A": args.tessera, "B": args.tessera_b}
    outs = {k: os.path.join(args.work, "ab-" + k) for k in builds}
    write_replacing(district, texts["original"])
    for k in builds:
        bake(builds[k], scenes, outs[k], args.threads)
    rows = {k: [] for k in builds}
    for r in range(args.rounds):
        for which in ("edited", "original"):
            write_replacing(district, texts[which])
            for k in ("AB" if r % 2 == 0 else "BA"):
                s, wall, cpu = bake(builds[k], scenes, outs[k], args.threads)
                rows[k].append((s["seconds"]["total"], s["seconds"]["polygons"], wall, cpu))
    for k in builds:
        med = [statistics.median(c) for c in zip(*rows[k])]
        print("%s n=%d  total %.3f s  polygons %.3f s  wall %.3f s  cpu %.3f s" % (
            k, len(rows[k]), *med))
    with open(os.path.join(outs["A"], "navmesh.tsn"), "rb") as a, \
            open(os.path.join(outs["B"], "navmesh.tsn"), "rb") as b:
        print("navmeshes", "identical" if a.read() == b.read() else "DIFFER")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["ratio", "ab"])
    p.add_argument("--tessera", required=True)
    p.add_argument("--tessera-b", help="the second build (ab)")
    p.add_argument("--citygen", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--edit", choices=["box", "move"], default="box")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--repeat", type=int, default=1, help="ratio: fresh bakes, each with its rebakes")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if args.mode == "ab" and not args.tessera_b:
        p.error("ab needs --tessera-b")
    (ratio if args.mode == "ratio" else ab)(args)


if __name__ == "__main__":
    main()
