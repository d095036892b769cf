//! Signals and job control as C programs see them, natively on the host and on cfslab with
//! the same output: `csignals` (handlers, their frames and flags, restarts, the waits for a
//! signal, SIGCHLD, timers), `cfaults` (handlers for a program's own faults, and UMIP's
//! answers, also against Linux 6.1 in the same QEMU), `cqueue` (real-time signals queued,
//! `rt_sigqueueinfo`, the queue's limit) and `cjobs` (process groups, sessions, stop and
//! continue, orphaned groups).

use std::process::Command;
use systests::user_programs as programs;
use systests::{checked_on_both, program_output};

/// Boots `-- argv` with the default options (at icount shift 2) and returns the run.
fn on_cfslab(argv: &str, flags: &[&str]) -> systests::Run {
    systests::on_cfslab("", argv, flags)
}

#[test]
fn signal_handlers_run_as_on_linux() {
    // Handlers with their siginfo, registers and FPU back after rt_sigreturn, SA_RESTART
    // and EINTR, SA_RESETHAND, SA_NODEFER, SA_ONSTACK with sigaltstack, sigsuspend,
    // sigpending, sigtimedwait, pause, SIGCHLD, the interval timer, a handler run from the
    // timer interrupt, and SIGSEGV for a handler without a restorer: see
    // userland/c/csignals.c.
    let (expected, run) =
        checked_on_both(&mut Command::new(programs().join("csignals")), "csignals");
    assert_eq!(program_output(&run), expected);
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}

#[test]
fn a_program_s_own_faults_reach_its_handlers_as_on_linux() {
    // SIGSEGV, SIGFPE, SIGILL and SIGTRAP handlers with Linux's siginfo and the faulting
    // registers in the ucontext, siglongjmp out and a rip moved on; a blocked or ignored
    // SIGSEGV still kills; sgdt, sidt, smsw, sldt and str answered with Linux's dummy
    // values under UMIP: see userland/c/cfaults.c. A host CPU without UMIP shows its real
    // tables, and the program then skips those checks (saying so): Linux's side can only be
    // compared where the host emulates as cfslab does.
    let (expected, run) = checked_on_both(&mut Command::new(programs().join("cfaults")), "cfaults");
    // The kernel's line for the child whose ignored SIGSEGV killed it.
    let segfault = |l: &str| l.starts_with("cfaults[") && l.contains("]: segfault at ");
    let output: String = program_output(&run)
        .lines()
        .filter(|l| !segfault(l))
        .map(|l| format!("{l}\n"))
        .collect();
    if expected.contains("the UMIP checks are skipped") {
        eprintln!("cfaults: no UMIP emulation on the host; cfslab's UMIP lines not compared");
        assert!(
            output.contains("sgdt (%rax): limit 0, Linux's dummy GDT"),
            "{output}"
        );
    } else {
        assert_eq!(output, expected);
    }
    assert_eq!(run.stdout.lines().filter(|l| segfault(l)).count(), 1);
}

/// `cfaults` on Linux 6.1 itself (`boot linux`, the machine of
/// `hello_prints_the_same_on_linux_in_the_same_qemu`): QEMU's CPU has UMIP there as it has
/// for cfslab, so the UMIP lines are compared with the reference kernel whatever the host's
/// CPU — 6.1 answers `sldt` and `str` too, not only `sgdt`, `sidt` and `smsw`.
#[test]
fn cfaults_prints_the_same_on_linux_6_1_in_the_same_qemu() {
    let on_linux = systests::on_linux(&["/bin/cfaults"]);
    assert_eq!(on_linux.status, 0, "{}{}", on_linux.stdout, on_linux.stderr);
    let linux = systests::linux_program_output(&on_linux);
    assert!(linux.contains("sldt %eax: "), "{linux}");
    let run = on_cfslab("/bin/cfaults", &[]);
    let segfault = |l: &str| l.starts_with("cfaults[") && l.contains("]: segfault at ");
    let cfslab: String = program_output(&run)
        .lines()
        .filter(|l| !segfault(l))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(cfslab, linux);
}

#[test]
fn real_time_signals_queue_as_on_linux() {
    // Real-time signals queued with their values, the lowest number first and one number
    // in the order sent; standard ones coalesce; sigqueue's siginfo in a handler;
    // rt_sigqueueinfo's and rt_tgsigqueueinfo's EPERM for a made-up siginfo to another
    // process; EAGAIN at RLIMIT_SIGPENDING; sigtimedwait leaves an SA_RESETHAND action;
    // pselect's signal mask while it waits: see userland/c/cqueue.c.
    let (expected, run) = checked_on_both(&mut Command::new(programs().join("cqueue")), "cqueue");
    assert_eq!(program_output(&run), expected);
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}

#[test]
fn process_groups_sessions_and_stops_are_as_on_linux() {
    // setpgid/setsid and their errors, kill of a group, SIGSTOP/SIGTSTP/SIGCONT with
    // WUNTRACED, WCONTINUED and SIGCHLD's codes, SA_NOCLDSTOP, waitpid on a group, an
    // orphaned group's SIGHUP and SIGCONT and its dropped SIGTSTP: see userland/c/cjobs.c.
    let (expected, run) = checked_on_both(&mut Command::new(programs().join("cjobs")), "cjobs");
    assert_eq!(program_output(&run), expected);
    assert!(!run.stdout.contains("is not implemented"), "{}", run.stdout);
}
