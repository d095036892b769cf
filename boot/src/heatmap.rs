//! A picture of which core had how much to run, over time: one row per core, one column per
//! time bin, each cell coloured by the core's runqueue length — the Wasted Cores paper's
//! own kind of figure (its Figures 2 and 3), with its tool's colours (white for an empty
//! runqueue, green for one task, then orange, red, pink and magenta for five or more).
//! Cores are grouped by NUMA node, the nodes' boundaries drawn and labelled.

use crate::lab::axis::Scale;
use std::fmt::Write;

const WIDTH: f64 = 800.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
/// A core's row: 5 px on the paper's 64 cores, taller on fewer (a machine of 8 vCPUs),
/// so that the plot is never thinner than 160 px.
fn row_height(cpus: usize) -> f64 {
    (160.0 / cpus.max(1) as f64).clamp(5.0, 20.0)
}
/// The most columns drawn: samples are binned down to this many.
const MAX_COLUMNS: usize = 600;
/// Runqueue length 0, 1, 2, 3, 4, and 5 or more.
const COLOURS: [&str; 6] = [
    "#ffffff", "#2ca02c", "#ff9900", "#d62728", "#ff0080", "#cc00cc",
];
const LEGEND: [&str; 6] = ["0 (idle)", "1", "2", "3", "4", "5 or more"];

/// The picture of `samples` (per sample, each core's runqueue length), taken every
/// `every_ns`, of cores in nodes of `per_node`, titled `title`.
pub fn svg(title: &str, samples: &[Vec<u8>], every_ns: u64, per_node: usize) -> String {
    let cpus = samples.first().map_or(0, Vec::len);
    let bin = samples.len().div_ceil(MAX_COLUMNS).max(1);
    let columns: Vec<Vec<u8>> = samples.chunks(bin).map(|c| typical(c, cpus)).collect();
    let plot_w = WIDTH - LEFT - RIGHT;
    let row = row_height(cpus);
    let plot_h = row * cpus as f64;
    let height = TOP + plot_h + 80.0;
    let mut out = String::new();
    crate::lab::svg::header(&mut out, title, height);
    let cell_w = plot_w / columns.len().max(1) as f64;
    for cpu in 0..cpus {
        let y = TOP + row * cpu as f64;
        let mut start = 0;
        for i in 1..=columns.len() {
            let colour = |c: &Vec<u8>| usize::from(c[cpu]).min(5);
            if i < columns.len() && colour(&columns[i]) == colour(&columns[start]) {
                continue;
            }
            let fill = COLOURS[colour(&columns[start])];
            if fill != COLOURS[0] {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{y}" width="{:.1}" height="{row}" fill="{fill}"/>"#,
                    LEFT + cell_w * start as f64,
                    cell_w * (i - start) as f64
                );
            }
            start = i;
        }
    }
    nodes(&mut out, cpus, per_node, plot_w);
    time_axis(&mut out, samples.len() as u64 * every_ns, plot_w, plot_h);
    legend(&mut out, TOP + plot_h + 48.0);
    out.push_str("</svg>\n");
    out
}

/// Each core's most common runqueue length over a bin of samples (the longer on a tie).
fn typical(bin: &[Vec<u8>], cpus: usize) -> Vec<u8> {
    (0..cpus)
        .map(|cpu| {
            let mut counts = [0usize; 6];
            for s in bin {
                counts[usize::from(s[cpu]).min(5)] += 1;
            }
            // `max_by_key` keeps the last of equals: the longer length.
            let best = (0..6).max_by_key(|&v| counts[v]).unwrap_or(0);
            best as u8
        })
        .collect()
}

/// The plot's frame, a line between nodes and each node's label.
fn nodes(out: &mut String, cpus: usize, per_node: usize, plot_w: f64) {
    let row = row_height(cpus);
    let plot_h = row * cpus as f64;
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>"##
    );
    let per_node = per_node.max(1);
    for node in 0..cpus.div_ceil(per_node) {
        let y = TOP + row * (node * per_node) as f64;
        if node > 0 {
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#444"/>"##,
                LEFT - 6.0,
                LEFT + plot_w
            );
        }
        let mid = y + row * per_node.min(cpus - node * per_node) as f64 / 2.0 + 4.0;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{mid}" text-anchor="end">node {node}</text>"#,
            LEFT - 8.0
        );
    }
}

/// Ticks at round times under the plot, in seconds.
fn time_axis(out: &mut String, span_ns: u64, plot_w: f64, plot_h: f64) {
    let span_ms = span_ns as f64 / 1e6;
    // Linear from 0: `for_range` over the upper half of the span never picks a log scale.
    let scale = Scale::for_range(span_ms / 2.0, span_ms);
    let y = TOP + plot_h;
    for tick in scale.ticks().into_iter().filter(|&t| t <= span_ms + 1e-9) {
        let x = LEFT + plot_w * tick / span_ms.max(1e-9);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{y}" x2="{x:.1}" y2="{}" stroke="#444"/>"##,
            y + 5.0
        );
        let seconds = format!("{:.3}", tick / 1000.0);
        let seconds = seconds.trim_end_matches('0').trim_end_matches('.');
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle">{seconds}</text>"#,
            y + 18.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">time (s)</text>"#,
        LEFT + plot_w / 2.0,
        y + 34.0
    );
}

/// The colours' meaning, in one row.
fn legend(out: &mut String, y: f64) {
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="{}">runqueue length:</text>"#,
        y + 10.0
    );
    let mut x = LEFT + 110.0;
    for (colour, label) in COLOURS.iter().zip(LEGEND) {
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}" stroke="#444"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}">{label}</text>"#,
            x + 16.0,
            y + 10.0
        );
        x += 26.0 + 8.0 * label.len() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_s_cells_merge_and_idle_is_left_blank() {
        // Two cores over four samples of 1 ms: core 0 runs one task throughout (one green
        // rectangle, the plot's width), core 1 is idle (no rectangle of its own). Two rows
        // are as tall as they may be (20 px), where the paper's 64 take 5 px each.
        let samples = vec![vec![1, 0]; 4];
        let svg = svg("t", &samples, 1_000_000, 1);
        assert_eq!(svg.matches(r##"fill="#2ca02c"/>"##).count(), 1, "{svg}");
        assert!(svg.contains(r#"width="710.0" height="20""#), "{svg}");
        assert_eq!(row_height(64), 5.0);
        assert!(svg.contains(">node 1<") && svg.contains(">5 or more<"));
    }

    #[test]
    fn a_bin_shows_its_most_common_length() {
        assert_eq!(typical(&[vec![0], vec![2], vec![2]], 1), [2]);
        assert_eq!(
            typical(&[vec![0], vec![1]], 1),
            [1],
            "a tie shows the longer"
        );
    }
}
