//! How long `boot run` waits before it kills QEMU, when `--timeout` is not given: derived
//! from the work the boot options ask for, so that `duration=60s` (or 3600 s) is not cut off
//! by a fixed limit, while a hung kernel is still stopped.
//!
//! The work is the virtual time of every scenario `run=` names (`duration=`, or each
//! scenario's own window, from `bootopts::scenarios`), and the cost is what a busy virtual
//! second takes on the host: under `-icount shift=N` a guest instruction takes 2^N virtual
//! ns, so the emulation cost per virtual second falls as N grows. The figures below were
//! measured on this project's 2-core build machine (`make run`: 14 s of virtual time in
//! about 80 s, so about 6 host s per busy virtual s at shift 0) and doubled as a margin.

use bootopts::Config;
use bootopts::scenarios::{Scenario, expand_run};

/// Host seconds per busy virtual second at `-icount shift=0`, with a margin of two.
const HOST_S_PER_VIRTUAL_S_SHIFT_0: f64 = 12.0;

/// Booting, the self-check and reporting, with room for a slow machine.
const FIXED_SECS: f64 = 60.0;

/// The timeout for a run of `options` (the kernel's boot options) at `icount_shift`
/// (`None`: real time, where a virtual second costs a host second).
pub fn derived(options: &str, icount_shift: Option<u32>) -> u64 {
    // Options the kernel will refuse need no time; the default timeout covers them.
    let Ok(config) = Config::parse(options) else {
        return FIXED_SECS as u64;
    };
    let virtual_secs: f64 = expand_run(&config.run)
        .into_iter()
        .filter_map(|name| Scenario::named(name, &config))
        .map(|s| config.duration_ns.unwrap_or(s.duration_ns) as f64 / 1e9)
        .sum();
    let cost = match icount_shift {
        Some(shift) => (HOST_S_PER_VIRTUAL_S_SHIFT_0 / f64::from(1u32 << shift.min(10))).max(1.0),
        None => 1.5,
    };
    (FIXED_SECS + virtual_secs * cost).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_grows_with_the_work() {
        // make run: the five seeds, 3 + 3 + 3 + 3 + 2 s, at shift 0.
        assert_eq!(derived("", Some(0)), 60 + 14 * 12);
        // duration=60s for the five: 300 s of virtual time.
        assert_eq!(derived("duration=60s", Some(0)), 60 + 300 * 12);
        // One scenario of an hour at shift 2 (a quarter of the cost).
        assert_eq!(
            derived("run=seed003 duration=3600s", Some(2)),
            60 + 3600 * 3
        );
        // Real time: a virtual second is about a host second.
        assert_eq!(derived("run=seed003 duration=10s", None), 60 + 15);
        // Refused options: just the fixed part.
        assert_eq!(derived("hz=7", Some(0)), 60);
    }
}
