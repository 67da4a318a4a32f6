//! The bake report: one self-contained HTML page (no external URL, no script) with the
//! summary's fields as a table, the seconds per stage as an SVG bar chart, resident and
//! anonymous memory over time as an SVG plot, and the preview image beside it.
//!
//! Memory over time comes from the trace of a [`tessera_budget::PeakSampler`] (a thread
//! sampling `/proc/self/status`) run beside the bake in the same process. The bake's own progress events are not seen by
//! the caller, so the stages are placed on the time axis from the summary's seconds per stage,
//! one after another in pipeline order (they run one after another; the short set-up between
//! them falls into the next stage; the merge runs beside voxelization, but the summary counts
//! its time apart from voxelization's, so the bands still add up to the bake).

use std::fmt::Write as _;

use serde_json::Value;
pub use tessera_budget::MemorySample;

/// The stages of a summary's `seconds` in the given order (the pipeline's), then any others
/// by name, without `total`.
pub fn stages_in_order(
    seconds: &serde_json::Map<String, Value>,
    order: &[&str],
) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = order
        .iter()
        .filter_map(|k| {
            seconds
                .get(*k)
                .and_then(Value::as_f64)
                .map(|v| (k.to_string(), v))
        })
        .collect();
    for (k, v) in seconds {
        if !order.contains(&k.as_str()) && k != "total" {
            if let Some(v) = v.as_f64() {
                out.push((k.clone(), v));
            }
        }
    }
    out
}

/// What the page shows.
pub struct ReportInput<'a> {
    /// The bake summary, as `summary.json` holds it.
    pub summary: &'a Value,
    /// Memory samples from the bake, if any were taken.
    pub memory: &'a [MemorySample],
    /// The preview's URL relative to the page (`preview.png`), if there is one.
    pub preview: Option<&'a str>,
    /// The bake's stages in pipeline order (`tessera_pipeline::STAGES`).
    pub stages: &'a [&'a str],
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn mib(b: f64) -> f64 {
    b / (1024.0 * 1024.0)
}

/// A value as table text: numbers as they are (bytes also in MiB), lists joined.
fn cell(key: &str, v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "(none)".into(),
        Value::Array(a) => a.iter().map(|x| cell("", x)).collect::<Vec<_>>().join(", "),
        Value::Number(n) if key.ends_with("_bytes") => {
            format!("{n} ({:.1} MiB)", mib(n.as_f64().unwrap_or(0.0)))
        }
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if key.starts_with("seconds") {
                format!("{f:.3}")
            } else {
                format!("{f:.2}")
            }
        }
        other => other.to_string(),
    }
}

/// Rows of the summary table: nested objects flattened as `outer.inner`.
fn rows(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                rows(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), cell(prefix, other))),
    }
}

/// A round step for an axis spanning `range` with about `n` ticks.
fn tick_step(range: f64, n: f64) -> f64 {
    if !(range.is_finite() && range > 0.0) {
        return 1.0;
    }
    let raw = range / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Seconds per stage as horizontal bars.
fn stage_bars(stages: &[(String, f64)], total: Option<f64>) -> String {
    let (w, label, bar_h, gap) = (640.0, 90.0, 22.0, 8.0);
    let longest = stages.iter().map(|s| s.1).fold(0.0f64, f64::max).max(1e-9);
    let height = stages.len() as f64 * (bar_h + gap) + gap;
    let room = w - label - 90.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {w} {height}" width="{w}" height="{height}" role="img" aria-label="seconds per stage">"#
    );
    for (i, (name, secs)) in stages.iter().enumerate() {
        let y = gap + i as f64 * (bar_h + gap);
        let bw = (secs / longest * room).max(1.0);
        let share = total
            .filter(|t| *t > 0.0)
            .map(|t| format!(" ({:.0}%)", secs / t * 100.0))
            .unwrap_or_default();
        let _ = write!(
            s,
            r#"<text x="{tx}" y="{ty}" text-anchor="end">{n}</text><rect x="{label}" y="{y}" width="{bw:.1}" height="{bar_h}" fill="{c}"/><text x="{vx:.1}" y="{ty}">{secs:.2} s{share}</text>"#,
            tx = label - 8.0,
            ty = y + bar_h * 0.7,
            n = escape(name),
            c = STAGE_COLOURS[i % STAGE_COLOURS.len()],
            vx = label + bw + 6.0,
        );
    }
    s.push_str("</svg>");
    s
}

const STAGE_COLOURS: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
];

/// Resident and anonymous memory over time, stages as bands, the budget as a dashed line.
fn memory_plot(samples: &[MemorySample], stages: &[(String, f64)], budget: Option<f64>) -> String {
    let (w, h) = (720.0, 300.0);
    let (left, right, top, bottom) = (64.0, 16.0, 24.0, 40.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let t_end = samples
        .last()
        .map(|s| s.t)
        .unwrap_or(0.0)
        .max(stages.iter().map(|s| s.1).sum::<f64>())
        .max(1e-3);
    let peak = samples
        .iter()
        .map(|s| s.rss.max(s.anon) as f64)
        .fold(0.0f64, f64::max);
    // The budget is drawn when it is within reach of the curves; far above, it is only named.
    let budget_shown = budget.filter(|&b| b > 0.0 && b <= 3.0 * peak.max(1.0));
    let y_max = mib(peak.max(budget_shown.unwrap_or(0.0)) * 1.08).max(1.0);
    let x = |t: f64| left + t / t_end * pw;
    let y = |b: f64| top + ph - mib(b) / y_max * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="memory over time">"#
    );
    // Stage bands.
    let mut t0 = 0.0;
    for (i, (name, secs)) in stages.iter().enumerate() {
        let (x0, x1) = (x(t0), x((t0 + secs).min(t_end)));
        let _ = write!(
            s,
            r#"<rect x="{x0:.1}" y="{top}" width="{bw:.1}" height="{ph}" fill="{c}" fill-opacity="0.13"/>"#,
            bw = (x1 - x0).max(0.0),
            c = STAGE_COLOURS[i % STAGE_COLOURS.len()],
        );
        if x1 - x0 > 30.0 {
            let _ = write!(
                s,
                r#"<text x="{tx:.1}" y="{ty}" text-anchor="middle" class="small">{n}</text>"#,
                tx = (x0 + x1) * 0.5,
                ty = top - 6.0,
                n = escape(name)
            );
        }
        t0 += secs;
    }
    // Axes and ticks.
    let step = tick_step(y_max, 5.0);
    let mut v = 0.0;
    while v <= y_max + 1e-9 {
        let yy = top + ph - v / y_max * ph;
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="small">{v} MiB</text>"##,
            x2 = left + pw,
            tx = left - 6.0,
            ty = yy + 4.0,
        );
        v += step;
    }
    let step = tick_step(t_end, 6.0);
    let mut t = 0.0;
    while t <= t_end + 1e-9 {
        let xx = x(t);
        let _ = write!(
            s,
            r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{y1}" y2="{y2}" stroke="#999"/><text x="{xx:.1}" y="{ty}" text-anchor="middle" class="small">{label}</text>"##,
            y1 = top + ph,
            y2 = top + ph + 4.0,
            ty = top + ph + 18.0,
            label = format_seconds(t, step),
        );
        t += step;
    }
    let _ = write!(
        s,
        r##"<text x="{cx}" y="{cy}" text-anchor="middle" class="small">seconds since the bake started</text><rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>"##,
        cx = left + pw * 0.5,
        cy = h - 4.0,
    );
    if let Some(b) = budget_shown {
        let yy = y(b);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" stroke="#c0392b" stroke-dasharray="6 4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="small" fill="#c0392b">budget {bm:.0} MiB</text>"##,
            x2 = left + pw,
            tx = left + pw - 4.0,
            ty = yy - 4.0,
            bm = mib(b),
        );
    }
    for (colour, pick) in [
        (
            "#1f77b4",
            (|m: &MemorySample| m.rss) as fn(&MemorySample) -> u64,
        ),
        ("#d62728", |m: &MemorySample| m.anon),
    ] {
        let pts: Vec<String> = samples
            .iter()
            .map(|m| format!("{:.1},{:.1}", x(m.t), y(pick(m) as f64)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.6" points="{}"/>"#,
            pts.join(" ")
        );
    }
    let _ = write!(
        s,
        r##"<rect x="{lx}" y="{ly}" width="10" height="10" fill="#1f77b4"/><text x="{tx}" y="{ty}" class="small">resident (rss)</text><rect x="{lx}" y="{ly2}" width="10" height="10" fill="#d62728"/><text x="{tx}" y="{ty2}" class="small">anonymous</text>"##,
        lx = left + 10.0,
        ly = top + 8.0,
        tx = left + 26.0,
        ty = top + 17.0,
        ly2 = top + 24.0,
        ty2 = top + 33.0,
    );
    s.push_str("</svg>");
    s
}

fn format_seconds(t: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{t:.0}")
    } else if step >= 0.1 {
        format!("{t:.1}")
    } else {
        format!("{t:.2}")
    }
}

/// The report page.
pub fn report_html(input: &ReportInput) -> String {
    let summary = input.summary;
    let get_u = |k: &str| summary.get(k).and_then(Value::as_u64);
    let empty = serde_json::Map::new();
    let seconds = summary
        .get("seconds")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let stages = stages_in_order(seconds, input.stages);
    let total = seconds.get("total").and_then(Value::as_f64);
    let scene = summary
        .get("scene")
        .and_then(Value::as_str)
        .unwrap_or("scene");

    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(h, "<title>tessera bake: {}</title>", escape(scene));
    h.push_str(
        "<style>\
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}\
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
.lead{color:#555;margin-top:0}\
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.chart text{font:12px system-ui,sans-serif;fill:#333}.chart text.small{font-size:11px}\
img.preview{max-width:100%;border:1px solid #ccc;image-rendering:pixelated}\
.note{color:#666;font-size:12px}\
</style></head><body>\n",
    );
    let _ = write!(h, "<h1>tessera bake: {}</h1>", escape(scene));
    let fmt_u = |k: &str| get_u(k).map_or("?".to_string(), |v| v.to_string());
    let _ = writeln!(
        h,
        "<p class=\"lead\">{} polygons, {} regions, {} portals, {} links from {} triangles; {} in total.</p>",
        fmt_u("polygons"),
        fmt_u("regions"),
        fmt_u("portals"),
        fmt_u("links"),
        fmt_u("triangles"),
        total.map_or("?".into(), |t| format!("{t:.2} s")),
    );

    h.push_str("<h2>Seconds per stage</h2>\n");
    if stages.is_empty() {
        h.push_str("<p class=\"note\">The summary has no stage timings.</p>\n");
    } else {
        h.push_str(&stage_bars(&stages, total));
        h.push('\n');
    }

    h.push_str("<h2>Memory over time</h2>\n");
    let budget = summary.get("memory_budget_bytes").and_then(Value::as_f64);
    if input.memory.len() >= 2 {
        h.push_str(&memory_plot(input.memory, &stages, budget));
        let _ = writeln!(
            h,
            "<p class=\"note\">{} samples of this process's resident and anonymous memory \
             (<code>/proc/self/status</code>). Stage bands are placed from the seconds per \
             stage, one after another.{}</p>",
            input.memory.len(),
            match budget {
                Some(b)
                    if b > 3.0
                        * input
                            .memory
                            .iter()
                            .map(|m| m.rss.max(m.anon) as f64)
                            .fold(1.0, f64::max) =>
                    format!(
                        " The memory budget ({:.0} MiB) is far above the curves and not drawn.",
                        mib(b)
                    ),
                _ => String::new(),
            }
        );
    } else {
        h.push_str(
            "<p class=\"note\">No memory samples were recorded for this bake; the peaks are in \
             the summary below.</p>\n",
        );
    }

    if let Some(src) = input.preview {
        let _ = writeln!(
            h,
            "<h2>Preview</h2><p class=\"note\">Top-down, region colours (higher floors lighter), \
             outlines dark, links magenta; grey is not walkable.</p>\
             <img class=\"preview\" src=\"{}\" alt=\"top-down preview of the navmesh\">",
            escape(src)
        );
    }

    h.push_str("<h2>Summary</h2>\n<table><tr><th>field</th><th>value</th></tr>\n");
    let mut table = Vec::new();
    rows("", summary, &mut table);
    for (k, v) in table {
        let numeric = v
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-');
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td{}>{}</td></tr>",
            escape(&k),
            if numeric { " class=\"n\"" } else { "" },
            escape(&v)
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}
