//! `membarrier(cmd, flags, cpu_id)` (Linux's kernel/sched/membarrier.c, 6.1), its private
//! expedited commands: a process that registered may have every other CPU running one of
//! its threads pass a full memory barrier before the call returns. What user-space RCU and
//! language runtimes use to make their fast paths fence-free; here also the one system call
//! that is an inter-processor interrupt's round trip and nothing more (`smpbench` times it
//! on both kernels).
//!
//! Linux asks each CPU whose running task has this memory; cfslab asks the CPUs in the
//! address space's mask of CPUs running it (its TLB shootdown's), which is that set, or
//! one more CPU running a kernel thread in the address space it kept. The interrupt and
//! its answer are the barrier: a CPU takes an interrupt only between instructions, with
//! its earlier stores visible.

use super::{errno, space};
use core::sync::atomic::{Ordering::SeqCst, fence};

/// Linux's command bits (include/uapi/linux/membarrier.h).
const QUERY: i64 = 0;
const PRIVATE_EXPEDITED: i64 = 1 << 3;
const REGISTER_PRIVATE_EXPEDITED: i64 = 1 << 4;

/// `membarrier(cmd, flags, cpu_id)`: QUERY answers the commands supported; the private
/// expedited command needs a registration first (EPERM, as Linux); any other command, or a
/// flag, is EINVAL (Linux's answer to what it does not support).
pub fn membarrier(cmd: i64, flags: u64, _cpu_id: i64) -> i64 {
    if flags != 0 {
        return -errno::EINVAL;
    }
    match cmd {
        QUERY => PRIVATE_EXPEDITED | REGISTER_PRIVATE_EXPEDITED,
        REGISTER_PRIVATE_EXPEDITED => {
            space().membarrier_registered.store(true, SeqCst);
            0
        }
        PRIVATE_EXPEDITED => {
            let space = space();
            if !space.membarrier_registered.load(SeqCst) {
                return -errno::EPERM;
            }
            // This CPU's own barrier (`others`' fence), then each other's, answered before
            // the call returns. A CPU that does not answer is a kernel's failure, not the
            // program's: the run ends, as for a TLB shootdown (`cpus::ipi::call_on`).
            let others = space.loaded_on.others();
            if let Err(cpu) = crate::cpus::ipi::call_on_each(others, barrier) {
                panic!("CPU {cpu} did not answer membarrier's interrupt");
            }
            0
        }
        _ => -errno::EINVAL,
    }
}

/// What the CPUs asked run: a full barrier.
fn barrier() -> u64 {
    fence(SeqCst);
    0
}
