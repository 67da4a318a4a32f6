//! The PNG beside `RESULTS.md`: wall time, peak RSS and seconds per million triangles (citygen
//! worlds) against scene area, both tools, every setting, in one detail mode. plotters draws it with its bitmap backend; text needs a TrueType font, read at run
//! time (plotters' own font lookup would need fontconfig). Without one the picture is drawn with
//! no text and `RESULTS.md` says what the axes are.

use crate::full::{Row, SettingResult, Side};
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

/// Fonts tried in order when `--font` names none.
const FONT_CANDIDATES: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// The first usable TrueType file: `wanted`, else a known one, else any `.ttf` under
/// `/usr/share/fonts`.
pub fn find_font(wanted: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = wanted {
        return p.is_file().then(|| p.to_path_buf());
    }
    if let Some(p) = FONT_CANDIDATES.iter().map(Path::new).find(|p| p.is_file()) {
        return Some(p.to_path_buf());
    }
    fn walk(dir: &Path, depth: usize) -> Option<PathBuf> {
        let mut entries: Vec<_> = std::fs::read_dir(dir).ok()?.flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() && depth > 0 {
                if let Some(f) = walk(&p, depth - 1) {
                    return Some(f);
                }
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ttf")) {
                return Some(p);
            }
        }
        None
    }
    walk(Path::new("/usr/share/fonts"), 4)
}

/// Registers `font` as plotters' sans-serif; false if it cannot be read or parsed.
pub fn use_font(font: &Path) -> bool {
    let Ok(bytes) = std::fs::read(font) else {
        return false;
    };
    // plotters keeps the font for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
}

const TESSERA: RGBColor = RGBColor(31, 100, 200);
const RECAST: RGBColor = RGBColor(210, 50, 40);

/// One series: a tool at one setting, points sorted by area.
struct Series {
    label: String,
    color: RGBColor,
    /// First setting: filled circles; later ones: open triangles.
    filled: bool,
    points: Vec<(f64, f64)>,
}

/// `value` gives a row's figure for tessera (true) or Recast (false), `None` to leave it out.
fn series(results: &[&SettingResult], value: impl Fn(&Row, bool) -> Option<f64>) -> Vec<Series> {
    let mut out = Vec::new();
    for (i, res) in results.iter().enumerate() {
        for (tessera, name, color) in [(true, "tessera", TESSERA), (false, "Recast", RECAST)] {
            let mut points: Vec<(f64, f64)> = res
                .rows
                .iter()
                .filter_map(|r| Some((r.area_m2, value(r, tessera)?)))
                .filter(|&(x, y)| x > 0.0 && y > 0.0 && y.is_finite())
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            out.push(Series {
                label: format!("{name}, {}", res.setting.name),
                color,
                filled: i == 0,
                points,
            });
        }
    }
    out
}

/// A tick label on a log axis: only at 1, 2 and 5 times a power of ten, so that the crowded
/// ticks near the top of each decade stay unlabelled.
fn log_label(v: &f64) -> String {
    if *v <= 0.0 {
        return String::new();
    }
    let decade = 10f64.powf(v.log10().floor());
    let mantissa = v / decade;
    if ![1.0, 2.0, 5.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6 * m)
    {
        return String::new();
    }
    if *v >= 1.0 {
        crate::full::thousands(*v)
    } else {
        let digits = (-v.log10().floor()) as usize;
        format!("{v:.digits$}")
    }
}

/// A log axis range around the values, a little wider than they are.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = (f64::INFINITY, 0f64);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() || hi <= 0.0 {
        return 0.1..10.0;
    }
    lo / 1.6..hi * 1.6
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    data: &[Series],
    text: bool,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let xs = log_range(data.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let ys = log_range(data.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let mut builder = ChartBuilder::on(area);
    builder.margin(16);
    if text {
        builder
            .caption(title, ("sans-serif", 22))
            .x_label_area_size(44)
            .y_label_area_size(64);
    }
    let mut chart = builder.build_cartesian_2d(xs.log_scale(), ys.log_scale())?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("scene plan area [m^2]")
            .y_desc(y_desc)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .x_label_formatter(&log_label)
            .y_label_formatter(&log_label);
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    // The thin lines of a log axis crowd into grey bands at the top of each decade: keep only
    // the bold ones.
    mesh.light_line_style(TRANSPARENT);
    mesh.draw()?;
    for s in data {
        let color = s.color;
        let line = chart.draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?;
        if text {
            let filled = s.filled;
            line.label(s.label.clone()).legend(move |(x, y)| {
                let marker: DynElement<'static, DB, (i32, i32)> = if filled {
                    Circle::new((x + 10, y), 4, color.filled()).into_dyn()
                } else {
                    TriangleMarker::new((x + 10, y), 5, color.stroke_width(2)).into_dyn()
                };
                EmptyElement::at((0, 0))
                    + PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    + marker
            });
        }
        if s.filled {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 5, color.filled())))?;
        } else {
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 6, color.stroke_width(2))),
            )?;
        }
    }
    if text {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()?;
    }
    Ok(())
}

/// The side a panel shows: tessera at its own tile size, or Recast; `None` if it failed.
fn side(r: &Row, tessera: bool) -> Option<&Side> {
    let s = if tessera { &r.tessera } else { &r.recast };
    s.ok().then_some(s)
}

/// Draws the three panels into `path`; `text` says whether a font was registered.
pub fn draw(path: &Path, results: &[&SettingResult], text: bool) -> Result<(), Box<dyn Error>> {
    let root = BitMapBackend::new(path, (2100, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 3));
    let time = series(results, |r, t| side(r, t).map(Side::best));
    let rss = series(results, |r, t| side(r, t).map(Side::rss_mib));
    let per_mtri = series(results, |r, t| {
        let s = side(r, t)?;
        (r.scene.starts_with("citygen") && r.triangles > 0)
            .then(|| s.best() / (r.triangles as f64 / 1e6))
    });
    panel(
        &panels[0],
        "Wall time (best run)",
        "wall time [s]",
        &time,
        text,
    )?;
    panel(
        &panels[1],
        "Peak RSS (ru_maxrss)",
        "peak RSS [MiB]",
        &rss,
        text,
    )?;
    panel(
        &panels[2],
        "Seconds per million triangles (citygen)",
        "s per M triangles",
        &per_mtri,
        text,
    )?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::log_label;

    #[test]
    fn log_labels_only_at_one_two_five() {
        assert_eq!(log_label(&10000.0), "10,000");
        assert_eq!(log_label(&200.0), "200");
        assert_eq!(log_label(&0.05), "0.05");
        assert_eq!(log_label(&0.2), "0.2");
        assert_eq!(log_label(&70000.0), "");
        assert_eq!(log_label(&3.0), "");
    }
}
