//! Each level's parameters as x86_64 set them: 2.6.24's and 2.6.36's (`SD_*_INIT`), and
//! 6.6's (`sd_init`, one rule for every level).

use super::{Flags, Level, Params};

/// 2.6.36's parameters for `level` on x86_64 (`include/linux/topology.h`,
/// `arch/x86/include/asm/topology.h`), without power savings: as 2.6.24's but for the
/// flags — every level below NUMA balances at fork and exec, MC and CPU prefer siblings,
/// NODE balances when newly idle — and the load histories read.
pub fn params_2_6_36(level: Level, cpus: usize) -> Params {
    use Flags as F;
    let mut p = params_2_6_24(level, cpus);
    let balance = F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::BALANCE_EXEC | F::BALANCE_FORK;
    let (flags, idx): (u32, [usize; 5]) = match level {
        Level::Smt => (
            balance | F::WAKE_AFFINE | F::SHARE_CPUPOWER | F::SHARE_PKG_RESOURCES,
            [0; 5],
        ),
        Level::Mc => (
            balance | F::WAKE_AFFINE | F::SHARE_PKG_RESOURCES | F::PREFER_SIBLING,
            [2, 0, 0, 0, 0],
        ),
        Level::Cpu => (
            balance | F::WAKE_AFFINE | F::PREFER_SIBLING,
            [2, 1, 0, 0, 0],
        ),
        Level::Node => (balance | F::WAKE_AFFINE | F::SERIALIZE, [3, 2, 0, 0, 0]),
        Level::AllNodes | Level::Numa => (
            F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::SERIALIZE,
            [3, 3, 0, 0, 0],
        ),
    };
    p.flags = Flags(flags);
    [
        p.busy_idx,
        p.idle_idx,
        p.newidle_idx,
        p.wake_idx,
        p.forkexec_idx,
    ] = idx;
    p
}

/// 2.6.24's parameters for `level` on x86_64 (`include/linux/topology.h`; NODE from
/// `include/asm-x86/topology_64.h`). `cpus` is the machine's CPU count (ALLNODES' ceiling
/// scales with it).
pub fn params_2_6_24(level: Level, cpus: usize) -> Params {
    use Flags as F;
    let p = |min, max, busy, pct, tries, [b, i, n, w, f]: [usize; 5], initial, flags| Params {
        min_interval_ms: min,
        max_interval_ms: max,
        busy_factor: busy,
        imbalance_pct: pct,
        cache_nice_tries: tries,
        busy_idx: b,
        idle_idx: i,
        newidle_idx: n,
        wake_idx: w,
        forkexec_idx: f,
        balance_interval_ms: initial,
        flags: Flags(flags),
    };
    let balance = F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::BALANCE_EXEC | F::WAKE_AFFINE;
    match level {
        Level::Smt => p(
            1,
            2,
            64,
            110,
            0,
            [0; 5],
            1,
            balance | F::WAKE_IDLE | F::SHARE_CPUPOWER,
        ),
        Level::Mc => p(
            1,
            4,
            64,
            125,
            1,
            [2, 0, 0, 1, 1],
            1,
            balance | F::WAKE_IDLE | F::SHARE_PKG_RESOURCES,
        ),
        Level::Cpu => p(1, 4, 64, 125, 1, [2, 1, 2, 1, 1], 1, balance),
        Level::Node => p(
            8,
            32,
            32,
            125,
            2,
            [3, 2, 0, 1, 1],
            1,
            F::LOAD_BALANCE | F::BALANCE_FORK | F::BALANCE_EXEC | F::SERIALIZE | F::WAKE_BALANCE,
        ),
        Level::AllNodes | Level::Numa => p(
            64,
            64 * cpus as u64,
            128,
            133,
            1,
            [3, 3, 0, 0, 0],
            64,
            F::LOAD_BALANCE | F::SERIALIZE,
        ),
    }
}

/// `RECLAIM_DISTANCE`: a NUMA level whose farthest node is more than this far stops
/// placing forks, execs and affine wake-ups across it (6.6's `node_reclaim_distance`).
const RECLAIM_DISTANCE: u64 = 30;

/// 6.6's parameters for `level` spanning `weight` CPUs whose farthest node is `distance`
/// away (`sd_init`, kernel/sched/topology.c): intervals of `weight` to 2 × `weight` ms, a
/// busy CPU balancing 16 times less often, a 17 % margin (10 % between hyperthreads), and
/// cache-hot tasks kept for 1 failed pass (2 across nodes, none between hyperthreads).
/// Every level balances at fork, exec and newly idle and prefers siblings, but NUMA levels,
/// which are serialised; beyond `RECLAIM_DISTANCE` a NUMA level no longer places forks,
/// execs or wake-ups. (6.6 has no `cpu_load[]`: the history indexes are 0.)
pub fn params_6_6(level: Level, weight: u64, distance: u64) -> Params {
    use Flags as F;
    let base = F::LOAD_BALANCE
        | F::BALANCE_NEWIDLE
        | F::BALANCE_EXEC
        | F::BALANCE_FORK
        | F::WAKE_AFFINE
        | F::PREFER_SIBLING;
    let (pct, tries, flags) = match level {
        Level::Smt => (110, 0, base | F::SHARE_CPUPOWER | F::SHARE_PKG_RESOURCES),
        Level::Mc => (117, 1, base | F::SHARE_PKG_RESOURCES),
        Level::Cpu => (117, 1, base),
        Level::Node | Level::AllNodes | Level::Numa => {
            let mut flags = (base & !F::PREFER_SIBLING) | F::NUMA | F::SERIALIZE;
            if distance > RECLAIM_DISTANCE {
                flags &= !(F::BALANCE_EXEC | F::BALANCE_FORK | F::WAKE_AFFINE);
            }
            (117, 2, flags)
        }
    };
    Params {
        min_interval_ms: weight,
        max_interval_ms: 2 * weight,
        busy_factor: 16,
        imbalance_pct: pct,
        cache_nice_tries: tries,
        busy_idx: 0,
        idle_idx: 0,
        newidle_idx: 0,
        wake_idx: 0,
        forkexec_idx: 0,
        balance_interval_ms: weight,
        flags: Flags(flags),
    }
}
