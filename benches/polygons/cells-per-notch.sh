#!/bin/sh
# Cells per notch for benches/RESULTS-polygons.md: bakes each Recast demo mesh at the
# `recast-demo` and `def` presets with Hertel-Mehlhorn, ANavMG without portal removal, ANavMG
# and ANavMG at tau = 5 degrees (only [polygons] changes between them, so the later bakes
# re-run the polygon stage only), and prints one table row per scene and preset from
# OUT/summary.json. Per variant: polygons and three cells-per-notch ratios from the summary's
# `by_notches`: all regions (polygons / notches), regions with a notch (a region without one
# is one polygon whatever the partition), and regions with 15 notches or more (seed 002's
# floor plans have 15 to 106).
# Run from the repository root after `cargo build --release`.
set -eu
BIN=${TESSERA:-target/release/tessera}
WORK=${WORK:-/tmp/tessera-cells-per-notch}
SCENES=${SCENES:-"dungeon nav_test undulating"}
PRESETS=${PRESETS:-"recast-demo def"}
mkdir -p "$WORK"
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }
for preset in $PRESETS; do
  echo "$preset: | scene | notches | regions without a notch | regions with 15+ | their notches | HM | all | notched | 15+ | no removal | all | notched | 15+ | ANavMG | all | notched | 15+ | tau 5 | all | notched | 15+ | polygon s (ANavMG) |"
  for scene in $SCENES; do
    out="$WORK/$preset-$scene"
    row="| $scene"
    for variant in hertel-mehlhorn:0:true anavmg:0:false anavmg:0:true anavmg:5:true; do
      partition=${variant%%:*}
      rest=${variant#*:}
      tau=${rest%%:*}
      removal=${rest#*:}
      toml="$WORK/$preset-$partition-$tau-$removal.toml"
      sed -e "s/^partition = .*/partition = \"$partition\"/" \
        -e "s/^tau_degrees = .*/tau_degrees = $tau/" \
        -e "s/^portal_removal = .*/portal_removal = $removal/" "configs/$preset.toml" >"$toml"
      "$BIN" bake "../shared/scenes/recast/$scene.obj" --up y --config "$toml" --out "$out" \
        --log-format quiet >/dev/null
      s="$out/summary.json"
      if [ "$partition" = hertel-mehlhorn ]; then
        row="$row | $(field "$s" "s['notches']") | $(field "$s" "s['by_notches'][0]['regions']") | $(field "$s" "s['by_notches'][-1]['regions']") | $(field "$s" "s['by_notches'][-1]['notches']")"
      fi
      ratios=$(field "$s" "'%.3f | %.3f | %.3f' % (s['polygons'] / s['notches'], (s['polygons'] - s['by_notches'][0]['polygons']) / s['notches'], s['by_notches'][-1]['polygons'] / s['by_notches'][-1]['notches'])")
      row="$row | $(field "$s" "s['polygons']") | $ratios"
      if [ "$variant" = anavmg:0:true ]; then
        secs=$(field "$s" "'%.2f' % s['seconds']['polygons']")
      fi
    done
    echo "$row | $secs |"
  done
done
