//! # sched — cfslab's scheduling policies
//!
//! The policy half of cfslab, mirroring Linux's kernel/sched/: the Completely Fair Scheduler
//! with group scheduling as Linux 2.6.24–2.6.36 shipped it, EEVDF as in 6.6, and the O(1)
//! scheduler of 2.6.11. The kernel reports what happens to tasks and asks [`Policy`] who
//! runs next; nothing here touches hardware or reads a clock (every call gets `now`), so the
//! same code runs in the kernel and in host tests and simulations.
//!
//! Start with [`policy`] (the interface) and [`rq`] (the protocol the kernel and the simulator
//! both drive), then [`weights`] and [`params`], then [`fair`]. The multiprocessor half —
//! topology, scheduling domains, the load balancer, the Wasted Cores invariant — is `smp`,
//! built with the `smp` feature (the simulator's `sim` feature brings it).
//!
//! What it does not do: switch stacks, take locks, or know processes, files or memory; it
//! decides, and the kernel (under its scheduler lock) or the simulator carries it out.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(any(test, feature = "sim"))]
extern crate std;

pub mod debug_layout;
pub mod fair;
pub mod features;
pub mod knobs;
pub mod o1;
pub mod params;
pub mod pelt;
pub mod policy;
pub mod programs;
pub mod rq;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
#[cfg(feature = "smp")]
pub mod smp;
pub mod stats;
mod task_id;
pub mod weights;

pub use fair::Fair;
pub use knobs::{KnobError, Tunable};
pub use o1::O1;
pub use params::{Era, FairParams, Feature, Features, Grouping, Tunables};
pub use policy::{
    BalanceQueue, Carried, ForkKind, Migrant, Nanos, Policy, QueuedTask, RunqueueInfo, SyncWake,
    TaskId, TaskInfo, Uid, Wakeup,
};
pub use rq::{Moving, Pick, PrevState, ReschedFlag, Rq, SchedTask, State, TaskStats, Waited};
