//! The scheduler's view of a machine of several CPUs: the topology the kernel reads from
//! QEMU's CPUID and ACPI tables, and the scheduling domains built from it, as
//! `/proc/schedstat` shows them.

use systests::boot_with;

#[test]
fn the_domains_are_built_from_the_topology_qemu_describes() {
    // Four sockets of two cores, each socket a NUMA node, the nodes on a ring (the boot
    // tool's `--numa 4`: 10 more per hop). The kernel reads the sockets and cores from
    // CPUID's leaf 0xB and the nodes from the ACPI SRAT and SLIT.
    let flags = [
        "--icount-shift",
        "2",
        "--smp",
        "8,sockets=4,cores=2",
        "--numa",
        "4",
        "--busybox",
    ];
    let run = boot_with(
        "era=2.6.24 -- /bin/cat /proc/schedstat /proc/sched_debug",
        &flags,
    );
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let t = run.result("topology");
    assert_eq!(t["nodes"].to_string(), "[[0,1],[2,3],[4,5],[6,7]]");
    assert_eq!(t["package"].to_string(), "[0,0,1,1,2,2,3,3]");
    assert_eq!(
        t["distance"].to_string(),
        "[[10,20,30,20],[20,10,20,30],[30,20,10,20],[20,30,20,10]]"
    );
    // 2.6.24 builds, for each CPU: the cores of its package (MC, whose cache they share),
    // then its node — the same two CPUs, a level that balances nothing more and is
    // dropped (`sd_degenerate`) — then the NUMA level over the nodes nearest it, all four
    // here (SD_NODES_PER_DOMAIN is 16). In `/proc/schedstat` each CPU's line is followed by
    // its domains', bottom up: the mask of its CPUs and 36 counters.
    let text = systests::program_output(&run);
    let lines: Vec<&str> = text.lines().collect();
    for cpu in 0..8 {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("cpu{cpu} ")))
            .unwrap_or_else(|| panic!("no cpu{cpu} line:\n{text}"));
        let package = format!("{:02x}", 0b11 << (cpu / 2 * 2));
        for (level, mask) in [(0, package.as_str()), (1, "ff")] {
            let words: Vec<&str> = lines[at + 1 + level].split(' ').collect();
            assert_eq!(
                words[..2],
                [format!("domain{level}"), mask.to_string()],
                "{text}"
            );
            assert_eq!(words.len(), 2 + 36, "{}", lines[at + 1 + level]);
            assert!(words[2..].iter().all(|w| w.parse::<u64>().is_ok()));
        }
        assert!(!lines.get(at + 3).is_some_and(|l| l.starts_with("domain")));
    }
    // `/proc/sched_debug`'s CPU sections add the balancer's state: when the CPU next
    // balances, and its five load histories, as 2.6.24 printed them.
    let sections: Vec<&str> = text.split("\ncpu#").skip(1).collect();
    assert_eq!(sections.len(), 8, "{text}");
    for section in sections {
        let names: Vec<&str> = section
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix('.'))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let expected = ["next_balance", "cpu_load[0]", "cpu_load[1]", "cpu_load[2]"];
        assert!(names.windows(4).any(|w| w == expected), "{section}");
        assert!(names.contains(&"cpu_load[4]"), "{section}");
    }
}
