#!/bin/sh
# Seed 002's Table 1 on our eight floor plans (benches/polygons/plans/*.txt: `outer` = the
# walls around the floor, `hole` / `rect` = obstacles, integer coordinates). The plans go
# straight through tessera-polygons' triangulate + anavmg (every outline edge a wall), and
# the test prints one row per plan and the averages; it fails if the average cells per notch
# with portal removal rises above the threshold in crates/polygons/src/tests.rs.
# Run from the repository root.
set -eu
cargo test -p tessera-polygons --lib floor_plans_stay_under -- --nocapture 2>&1 |
  grep -E '^\||^average|^test result'
