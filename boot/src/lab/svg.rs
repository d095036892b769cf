//! Two small SVG plots, written by hand (a few lines of markup each, no plotting library):
//! latency CDFs, one line per variant (small multiples past [`MAX_CURVES`]), and a timeline
//! of which task ran when, from a trace. Ticks and scales: [`super::axis`].

use std::fmt::Write;

use super::axis::{self, Scale};

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];
/// The most curves one chart holds: more are drawn as small multiples, each panel with
/// the first series (the baseline) again for reference.
pub const MAX_CURVES: usize = 6;
/// A CDF panel's plot area, and a legend row's height.
const PANEL_PLOT: f64 = 230.0;
const LEGEND_ROW: f64 = 17.0;

/// An SVG document's opening, `height` high: the white page and the title (the lab's
/// plots and `crate::heatmap`'s pictures alike, 800 wide).
pub(crate) fn header(out: &mut String, title: &str, height: f64) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A series' look: its colour and whether it is the dashed baseline.
struct Curve<'a> {
    label: String,
    samples: &'a [u64],
    colour: &'static str,
    dashed: bool,
}

/// The panels of a CDF chart: all series on one if they fit, else the baseline (first)
/// series beside each group of the others, groups as even as they can be.
fn panels(series: &[(String, Vec<u64>)]) -> Vec<Vec<Curve<'_>>> {
    fn curve((i, (label, samples)): (usize, &(String, Vec<u64>))) -> Curve<'_> {
        Curve {
            label: label.clone(),
            samples,
            colour: COLOURS[i % COLOURS.len()],
            dashed: false,
        }
    }
    if series.len() <= MAX_CURVES {
        return vec![series.iter().enumerate().map(curve).collect()];
    }
    let (base, rest) = series.split_first().expect("more than MAX_CURVES series");
    let groups = rest.len().div_ceil(MAX_CURVES - 1);
    let per_group = rest.len().div_ceil(groups);
    rest.chunks(per_group)
        .map(|group| {
            let baseline = Curve {
                label: format!("{} (baseline)", base.0),
                samples: &base.1,
                colour: "#555555",
                dashed: true,
            };
            core::iter::once(baseline)
                .chain(group.iter().enumerate().map(curve))
                .collect()
        })
        .collect()
}

/// A CDF plot: for each series (label, samples in µs), the fraction of samples ≤ x. The
/// x axis is logarithmic when the samples span two decades or more, with round ticks; the
/// legend sits under each panel, so a long label never leaves the picture.
pub fn cdf(title: &str, x_label: &str, series: &[(String, Vec<u64>)]) -> String {
    let all = || series.iter().flat_map(|(_, s)| s.iter().copied());
    let hi = all().max().unwrap_or(1) as f64;
    let lo = all().filter(|&v| v > 0).min().unwrap_or(1) as f64;
    let scale = Scale::for_range(lo, hi);
    let panels = panels(series);
    let heights: Vec<f64> = panels
        .iter()
        .map(|p| PANEL_PLOT + 70.0 + LEGEND_ROW * p.len() as f64)
        .collect();
    let mut out = String::new();
    header(&mut out, title, TOP + heights.iter().sum::<f64>());
    let mut top = TOP;
    for (i, (panel, height)) in panels.iter().zip(&heights).enumerate() {
        let heading = (panels.len() > 1).then(|| format!("{} of {}", i + 1, panels.len()));
        cdf_panel(&mut out, top, scale, x_label, panel, heading.as_deref());
        top += height;
    }
    out.push_str("</svg>\n");
    out
}

/// One panel at `top`: axes, ticks, curves, legend.
fn cdf_panel(
    out: &mut String,
    top: f64,
    scale: Scale,
    x_label: &str,
    curves: &[Curve],
    heading: Option<&str>,
) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_top = top + 10.0;
    let x = |v: f64| LEFT + scale.position(v) * plot_w;
    let y = |f: f64| plot_top + (1.0 - f) * PANEL_PLOT;
    if let Some(heading) = heading {
        let _ = writeln!(
            out,
            r#"<text x="{LEFT}" y="{}">{heading}</text>"#,
            top + 4.0
        );
    }
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{plot_top}" width="{plot_w}" height="{PANEL_PLOT}" fill="none" stroke="black"/>"##
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{f:.2}</text>"#,
            LEFT - 6.0,
            y(f) + 4.0
        );
    }
    for tick in scale.ticks() {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{plot_top}" x2="{0:.1}" y2="{1}" stroke="#dddddd"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(tick),
            plot_top + PANEL_PLOT,
            plot_top + PANEL_PLOT + 16.0,
            axis::label(tick)
        );
    }
    let axis_name = if scale.is_log() {
        format!("{x_label}, log scale")
    } else {
        x_label.to_string()
    };
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        plot_top + PANEL_PLOT + 34.0,
        escape(&axis_name)
    );
    let middle = plot_top + PANEL_PLOT / 2.0;
    let _ = writeln!(
        out,
        r#"<text x="16" y="{middle}" text-anchor="middle" transform="rotate(-90 16 {middle})">fraction of samples ≤ x</text>"#
    );
    for (i, curve) in curves.iter().enumerate() {
        let mut sorted = curve.samples.to_vec();
        sorted.sort_unstable();
        let n = sorted.len().max(1) as f64;
        let mut points = format!("{:.1},{:.1}", LEFT, y(0.0));
        for (k, v) in sorted.iter().enumerate() {
            let _ = write!(
                points,
                " {:.1},{:.1} {:.1},{:.1}",
                x(*v as f64),
                y(k as f64 / n),
                x(*v as f64),
                y((k + 1) as f64 / n)
            );
        }
        let dash = if curve.dashed {
            r#" stroke-dasharray="6 3""#
        } else {
            ""
        };
        let colour = curve.colour;
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{points}"/>"#
        );
        let ly = plot_top + PANEL_PLOT + 56.0 + LEGEND_ROW * i as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="3"{dash}/><text x="{}" y="{ly}">{}</text>"#,
            ly - 4.0,
            LEFT + 18.0,
            ly - 4.0,
            LEFT + 24.0,
            escape(&curve.label)
        );
    }
}

/// One `sched_switch` of a trace: time (µs) and the task switched to.
pub struct Switch {
    pub at_us: u64,
    pub next: String,
}

/// Reads the `sched_switch` lines of ftrace text.
pub fn switches(trace: &str) -> Vec<Switch> {
    crate::ftrace::lines(trace)
        .filter(|l| l.event == "sched_switch")
        .filter_map(|l| {
            Some(Switch {
                at_us: l.at_us,
                next: format!("{}-{}", l.field("next_comm")?, l.field("next_pid")?),
            })
        })
        .collect()
}

/// A timeline of the first `window_us` of a trace: one row per task, a bar while it runs.
pub fn timeline(title: &str, switches: &[Switch], window_us: u64) -> String {
    let mut out = String::new();
    header(&mut out, title, HEIGHT);
    let Some(start) = switches.first().map(|s| s.at_us) else {
        out.push_str("</svg>\n");
        return out;
    };
    let mut tasks: Vec<&str> = Vec::new();
    for s in switches {
        if !tasks.contains(&s.next.as_str()) {
            tasks.push(&s.next);
        }
    }
    let (plot_w, plot_h) = (WIDTH - LEFT - 40.0, HEIGHT - TOP - BOTTOM);
    let row = plot_h / tasks.len().max(1) as f64;
    let x = |t: u64| {
        LEFT + 30.0 + (t.saturating_sub(start)) as f64 / window_us as f64 * (plot_w - 30.0)
    };
    for (i, task) in tasks.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            LEFT + 24.0,
            TOP + row * (i as f64 + 0.6),
            escape(task)
        );
    }
    for pair in switches.windows(2) {
        let (from, to) = (pair[0].at_us, pair[1].at_us.min(start + window_us));
        if from >= start + window_us {
            break;
        }
        let i = tasks.iter().position(|t| *t == pair[0].next).unwrap_or(0);
        let colour = COLOURS[i % COLOURS.len()];
        let _ = writeln!(
            out,
            r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{colour}"/>"#,
            x(from),
            TOP + row * i as f64 + 2.0,
            (x(to) - x(from)).max(0.3),
            row - 4.0
        );
    }
    for i in 0..=4 {
        let t = window_us * i / 4;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{} ms</text>"#,
            x(start + t),
            HEIGHT - 20.0,
            t / 1_000
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_are_read_from_ftrace_lines() {
        let trace = "# tracer: nop\n\
                         hog-4       [000] d..2.     1.000010: sched_switch: prev_comm=hog prev_pid=4 prev_prio=120 prev_state=R+ ==> next_comm=sleeper next_pid=3 next_prio=120\n\
                     sleeper-3       [000] d..2.     1.000050: sched_waking: comm=x pid=5 prio=120 target_cpu=000\n";
        let s = switches(trace);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].at_us, s[0].next.as_str()), (1_000_010, "sleeper-3"));
    }

    #[test]
    fn plots_are_svg_with_one_line_per_series() {
        let svg = cdf(
            "t",
            "µs",
            &[("a".into(), vec![1, 2, 3]), ("b & c".into(), vec![5])],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("b &amp; c"));
    }

    /// Seed 003's matrix has 18 variants: small multiples of at most six curves, each
    /// panel with the baseline, and every legend entry inside the picture.
    #[test]
    fn many_series_become_panels_of_at_most_six_curves() {
        let series: Vec<(String, Vec<u64>)> = (0..18)
            .map(|i| {
                (
                    format!("variant {i} with a long, long label"),
                    vec![10 * i + 5, 20_000],
                )
            })
            .collect();
        let svg = cdf("seed 003", "latency (µs)", &series);
        let panels = svg.matches(" of 4</text>").count();
        assert_eq!(
            panels, 4,
            "17 variants beside the baseline: 4 panels of 4 or 5"
        );
        assert_eq!(svg.matches("<polyline").count(), 17 + 4);
        assert_eq!(svg.matches("(baseline)").count(), 4);
        assert!(svg.contains("log scale"), "5 µs to 20 ms spans decades");
        let height: f64 = svg
            .split("height=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .and_then(|h| h.parse().ok())
            .unwrap();
        let lowest_text = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| {
                t.split("y=\"")
                    .nth(1)?
                    .split('"')
                    .next()?
                    .parse::<f64>()
                    .ok()
            })
            .fold(0.0, f64::max);
        assert!(
            lowest_text < height,
            "legend at {lowest_text} in a {height} px picture"
        );
    }
}
