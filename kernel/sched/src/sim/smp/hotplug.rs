//! CPU hotplug in the SMP simulator: a CPU taken offline and brought back, after which
//! every CPU's domains are rebuilt — without their NUMA levels under 4.1's Missing
//! Scheduling Domains bug ([`crate::smp::domains::build_after_hotplug`]).

use super::SmpSim;
use crate::policy::Policy;
use crate::smp::domains::build_after_hotplug;
use crate::smp::runqueues::CpuBalance;

impl<P: Policy> SmpSim<P> {
    /// Takes CPU `cpu` offline and at once back online (the paper's trigger: `echo 0`,
    /// then `echo 1`, to its `/sys/devices/system/cpu/cpuN/online`): the domains of every
    /// CPU are built again (`partition_sched_domains`), each balancing from scratch. The
    /// CPU must hold no task: the simulator does not move tasks off a CPU going offline
    /// (the kernel does).
    pub fn cycle_cpu(&mut self, cpu: usize) {
        assert!(
            self.current(cpu).is_none() && self.cpus[cpu].rq.policy().nothing_queued(),
            "CPU {cpu} holds tasks"
        );
        let jiffies = self.now / self.config.tick_ns;
        for c in 0..self.cpus.len() {
            let domains = build_after_hotplug(&self.topology, c, self.rules, self.features);
            self.cpus[c].balance = CpuBalance::with_domains(&self.topology, c, domains, jiffies);
        }
    }
}
