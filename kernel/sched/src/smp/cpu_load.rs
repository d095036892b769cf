//! A CPU's load as the 2.6.24 balancer reads it: the weight queued on it now (the sum of
//! its runnable tasks' weights, `weighted_cpuload`) and a history of it (`rq->cpu_load[]`,
//! `update_cpu_load`), kept at each tick.
//!
//! History `i` moves 1/2^i of the way to the load at each tick: `cpu_load[0]` is the last
//! tick's load, `cpu_load[4]` a slow average. Rising, it rounds up, so that it can reach the
//! load it follows. A domain's balancing reads one of them by its index (`busy_idx`,
//! `idle_idx`, …; 0 means the load now), and takes a low guess of a CPU it might pull from
//! (`source_load`: the smaller of history and now) and a high guess of itself
//! (`target_load`: the larger): both lean towards leaving tasks where they are.
//!
//! What it leaves out: 2.6.24 updates the history only at a tick, so a CPU whose tick is
//! stopped keeps its last values (2.6.36 decays the ticks it missed); the caller decides
//! when ticks happen.

/// How many histories (`CPU_LOAD_IDX_MAX`).
pub const HISTORIES: usize = 5;

/// One CPU's load history (see the module's docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuLoad {
    /// `cpu_load[i]`.
    pub history: [u64; HISTORIES],
}

impl CpuLoad {
    /// A CPU whose load has been `load` for ever: every history at it.
    pub fn steady(load: u64) -> CpuLoad {
        CpuLoad {
            history: [load; HISTORIES],
        }
    }

    /// The tick's update (`update_cpu_load`), `load` being the CPU's weight now.
    pub fn tick(&mut self, load: u64) {
        for (i, old) in self.history.iter_mut().enumerate() {
            let scale = 1u64 << i;
            // Rising, round up: (old × (2^i − 1) + load) / 2^i would stop short of it.
            let new = if load > *old { load + scale - 1 } else { load };
            *old = (*old * (scale - 1) + new) >> i;
        }
    }

    /// `source_load`: the low guess of a CPU the balancer might pull from, by history
    /// `index` (0: `now`, the load queued now).
    pub fn source(&self, now: u64, index: usize) -> u64 {
        match index {
            0 => now,
            i => self.history[i - 1].min(now),
        }
    }

    /// `target_load`: the high guess of the CPU that balances, by history `index`.
    pub fn target(&self, now: u64, index: usize) -> u64 {
        match index {
            0 => now,
            i => self.history[i - 1].max(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_history_moves_its_share_of_the_way_and_rounds_up_when_rising() {
        let mut l = CpuLoad::default();
        l.tick(1024);
        // (0 × (2^i − 1) + 1024 + 2^i − 1) / 2^i
        assert_eq!(l.history, [1024, 512, 256, 128, 64]);
        l.tick(1024);
        assert_eq!(l.history, [1024, 768, 448, 240, 124]);
        // Falling to 0: no rounding; history 1 halves.
        l.tick(0);
        assert_eq!(l.history, [0, 384, 336, 210, 116]);
        // Rising, a history reaches its target (without the round-up, history 4 at 10
        // would stop at 9: the case 2.6.24's comment gives).
        let mut l = CpuLoad::default();
        for _ in 0..200 {
            l.tick(10);
        }
        assert_eq!(l.history, [10; HISTORIES]);
    }

    #[test]
    fn the_guesses_lean_towards_staying_put() {
        let l = CpuLoad {
            history: [3072, 2048, 1024, 512, 0],
        };
        assert_eq!((l.source(2048, 0), l.target(2048, 0)), (2048, 2048));
        assert_eq!((l.source(2048, 2), l.target(2048, 2)), (2048, 2048));
        assert_eq!((l.source(2048, 3), l.target(2048, 3)), (1024, 2048));
        assert_eq!((l.source(2048, 1), l.target(2048, 1)), (2048, 3072));
    }
}
