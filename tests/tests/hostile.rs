//! Hostile programs: calls a careless or malicious program makes, each answered as Linux
//! answers it, with the offender alone paying and nothing leaked. `userland/c/hostile.c`
//! runs natively on the host and on cfslab, and both must print the same lines.

use std::process::Command;
use systests::user_programs as programs;
use systests::{assert_nothing_leaked, checked_on_both, on_cfslab, program_output};

#[test]
fn hostile_calls_are_answered_as_on_linux() {
    // wait4's pid, kill's pid and signal, and the fds of read, write and close read as 32
    // bits; a write to a pipe with no reader gives EPIPE to a writer that ignores or blocks
    // SIGPIPE, and kills one that leaves it at its default; a directory listing into a bad
    // buffer fails with EFAULT and loses no entries; a blocking 1 MiB write to a pipe
    // writes it all, waiting as the reader drains it; munmap gives addresses back for
    // reuse, and MAP_FIXED, MAP_FIXED_NOREPLACE and hints are honoured; execve takes
    // strings of up to 32 pages and 1,000 of them, and gives E2BIG beyond.
    let (expected, run) = checked_on_both(&mut Command::new(programs().join("hostile")), "hostile");
    assert_eq!(program_output(&run), expected);
}

#[test]
fn sigkill_to_pid_1_is_ignored_and_the_run_goes_on() {
    // Pid 1 is the boot task, a kernel thread with no handler for anything: as Linux's
    // init, it ignores the signal, and root's kill still succeeds. Not run natively: there
    // it would be the host's init.
    let run = on_cfslab("", "/bin/hostile pid1", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    assert_eq!(
        program_output(&run),
        "ok kill(1, SIGKILL) as root succeeds\nok and pid 1 is still there\n\
         hostile: all checks passed\n"
    );
}

#[test]
fn the_run_ends_with_its_program_and_what_it_left_running_is_killed_and_reaped() {
    // A child that sleeps for ever outlives the program; the run still ends as the program
    // does, every frame back.
    let run = on_cfslab("", "/bin/hostile orphan", &["--timeout", "60"]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(program_output(&run), "hostile: left a child running\n");
    assert_eq!(run.result("exit")["status"], 0);
    assert_nothing_leaked(&run);
}

#[test]
fn page_tables_count_in_a_process_s_limit_and_munmap_frees_them() {
    // One page every 2 MiB needs a level-1 table per page: two frames each. The 64 MiB
    // limit (16,384 frames) so stops the program below 8,192 pages, and above 8,192 less
    // what the program itself holds (its image, stack and their tables: under 512
    // frames). After munmap of them all, the tables are gone too, so the same number
    // fits again elsewhere. Not run natively: Linux has no such limit.
    let run = on_cfslab("", "/bin/hostile tables", &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_nothing_leaked(&run);
    let output = program_output(&run);
    let counts: Vec<u64> = output
        .lines()
        .filter_map(|line| line.strip_prefix("hostile: "))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect();
    let [first, again] = counts[..] else {
        panic!("two counts expected:\n{output}");
    };
    assert!((16_384 - 512) / 2 < first && first < 16_384 / 2, "{output}");
    assert_eq!(again, first, "{output}");
}
