#!/bin/sh
# Cells per notch for benches/RESULTS-polygons.md: bakes each Recast demo mesh at the
# `recast-demo` and `def` presets with Hertel-Mehlhorn, ANavMG and ANavMG at tau = 5 degrees
# (only [polygons] changes between the three, so the later bakes re-run the polygon stage
# only), and prints one table row per scene and preset from OUT/summary.json.
# Run from the repository root after `cargo build --release`.
set -eu
BIN=${TESSERA:-target/release/tessera}
WORK=${WORK:-/tmp/tessera-cells-per-notch}
SCENES=${SCENES:-"dungeon nav_test undulating"}
mkdir -p "$WORK"
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }
for preset in recast-demo def; do
  echo "$preset: | scene | notches | HM | HM c/n | ANavMG | c/n | ANavMG tau 5 | c/n | polygon s (ANavMG) |"
  for scene in $SCENES; do
    out="$WORK/$preset-$scene"
    row="| $scene"
    for variant in hertel-mehlhorn:0 anavmg:0 anavmg:5; do
      partition=${variant%:*}
      tau=${variant#*:}
      toml="$WORK/$preset-$partition-$tau.toml"
      sed -e "s/^partition = .*/partition = \"$partition\"/" \
        -e "s/^tau_degrees = .*/tau_degrees = $tau/" "configs/$preset.toml" >"$toml"
      "$BIN" bake "../shared/scenes/recast/$scene.obj" --up y --config "$toml" --out "$out" \
        --log-format quiet >/dev/null
      s="$out/summary.json"
      if [ "$variant" = hertel-mehlhorn:0 ]; then
        row="$row | $(field "$s" "s['notches']")"
      fi
      row="$row | $(field "$s" "s['polygons']") | $(field "$s" "'%.3f' % (s['polygons'] / s['notches'])")"
      if [ "$variant" = anavmg:0 ]; then
        secs=$(field "$s" "'%.2f' % s['seconds']['polygons']")
      fi
    done
    echo "$row | $secs |"
  done
done
