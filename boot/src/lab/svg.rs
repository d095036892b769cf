//! Two small SVG plots, written by hand (a few lines of markup each, no plotting library):
//! latency CDFs, one line per variant, and a timeline of which task ran when, from a trace.

use std::fmt::Write;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 220.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn header(out: &mut String, title: &str) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
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

/// A CDF plot: for each series (label, samples in µs), the fraction of samples ≤ x.
pub fn cdf(title: &str, x_label: &str, series: &[(String, Vec<u64>)]) -> String {
    let mut out = String::new();
    header(&mut out, title);
    let max = series
        .iter()
        .flat_map(|(_, s)| s.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |v: f64| LEFT + v / max * plot_w;
    let y = |f: f64| TOP + (1.0 - f) * plot_h;
    // Axes, ticks and labels.
    let _ = writeln!(
        out,
        r#"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>"#
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{f:.2}</text>"#,
            LEFT - 6.0,
            y(f) + 4.0
        );
        let v = max * f;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{:.0}</text>"#,
            x(v),
            TOP + plot_h + 16.0,
            v
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0,
        escape(x_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">fraction of samples ≤ x</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (i, (label, samples)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut sorted = samples.clone();
        sorted.sort_unstable();
        let n = sorted.len().max(1) as f64;
        let mut points = format!("{:.1},{:.1}", x(0.0), y(0.0));
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
        // Past ten series the colours repeat, dashed.
        let dash = if i >= COLOURS.len() {
            r#" stroke-dasharray="6 3""#
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{points}"/>"#
        );
        let ly = TOP + 14.0 + 17.0 * i as f64;
        let lx = WIDTH - RIGHT + 12.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="3"{dash}/>"#,
            ly - 4.0,
            lx + 18.0,
            ly - 4.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{ly}">{}</text>"#,
            lx + 24.0,
            escape(label)
        );
    }
    out.push_str("</svg>\n");
    out
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
    header(&mut out, title);
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
}
