//! The table of the documents' generated blocks (see the module above): each tag, the
//! data file it is rendered from, how, and what writes the data.

use super::{bench, gdb, run_output};

/// A generated block: its tag, the data file it is rendered from (relative to the
/// workspace root), how, and what writes the data.
pub struct Block {
    pub tag: &'static str,
    pub data: &'static str,
    pub render: fn(&str) -> Result<String, String>,
    pub made_by: &'static str,
}

/// The seed experiments on the host simulator (`cargo test -p sched --test seeds`).
pub const SEEDS_DATA: &str = "docs/data/seeds.txt";
/// The shell session of docs/shell.md, as the live-scheduler system test typed it.
const SESSION_DATA: &str = "docs/data/session.txt";

/// Every block but the lab's and compare's scenario tables, which their own modules check.
pub const BLOCKS: [Block; 19] = [
    Block {
        tag: "run",
        data: run_output::DATA,
        render: run_output::render_full,
        made_by: "boot docs run",
    },
    Block {
        tag: "run:short",
        data: run_output::DATA,
        render: run_output::render_short,
        made_by: "boot docs run",
    },
    Block {
        tag: "gdb:scheduler",
        data: gdb::SCHEDULER.data,
        render: gdb::render_scheduler,
        made_by: "boot docs gdb",
    },
    Block {
        tag: "gdb:hello",
        data: gdb::HELLO.data,
        render: gdb::render_hello,
        made_by: "boot docs gdb",
    },
    Block {
        tag: crate::compare::paths_table::PATHS_TAG,
        data: crate::compare::paths_table::PATHS_DATA,
        render: crate::compare::paths_table::paths_block,
        made_by: "boot compare --paths (make bench)",
    },
    Block {
        tag: "bench:ops",
        data: bench::DATA,
        render: bench::render_ops,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:ratio",
        data: bench::DATA,
        render: bench::render_ratio,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:switch",
        data: bench::DATA,
        render: bench::render_switch,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:churn",
        data: bench::DATA,
        render: bench::render_churn,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:sim",
        data: bench::DATA,
        render: super::sim_bench::render,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:smp",
        data: bench::DATA,
        render: super::smp_bench::render,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:storm",
        data: bench::DATA,
        render: super::storm_bench::render,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:ttwu",
        data: bench::DATA,
        render: super::ttwu_bench::render,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "bench:messaging",
        data: bench::DATA,
        render: super::messaging_bench::render,
        made_by: "boot docs bench (make bench)",
    },
    Block {
        tag: "seeds",
        data: SEEDS_DATA,
        render: text_block,
        made_by: "boot docs seeds",
    },
    Block {
        tag: "session",
        data: SESSION_DATA,
        render: text_block,
        made_by: "CFSLAB_BLESS=1 cargo test -p systests --test live_scheduler",
    },
    Block {
        tag: "wasted:sim",
        data: super::wasted_sim::DATA,
        render: super::wasted_sim::render,
        made_by: "boot docs wasted (make wasted)",
    },
    Block {
        tag: "compare:smp",
        data: crate::compare::smp::DATA,
        render: crate::compare::smp::render,
        made_by: "make compare",
    },
    Block {
        tag: "wasted:kernel",
        data: super::wasted_kernel::DATA,
        render: super::wasted_kernel::render,
        made_by: "boot docs wasted (make wasted)",
    },
];

/// A program's output shown as it is, in a `text` code block.
fn text_block(data: &str) -> Result<String, String> {
    Ok(format!("\n```text\n{data}```\n"))
}
