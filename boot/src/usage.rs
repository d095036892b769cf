//! The boot tool's help text: its modes, flags and exit statuses, as `boot help` prints it
//! and as a usage error ends (the parser is `cli.rs`).

pub const USAGE: &str = "\
usage: boot run [OPTIONS] [KEY=VALUE...]   build and boot the kernel; KEY=VALUE are boot options
       boot gdb [OPTIONS]                  boot paused with a gdb stub and attach gdb at the entry
       boot test-runner ELF [ARGS...]      boot a kernel test binary (cargo's runner)
       boot lab [--seconds S] [--seeds N] [--jobs N]
                                           every seed experiment x variant x seed 1..N;
                                           report in target/lab, the documents' tables refreshed
       boot lab --check                    do the documents' tables match docs/lab/results.json?
       boot userland                       build the user programs (userland/); print
                                           the directory that holds them
       boot busybox                        fetch Debian's busybox-static (once); print
                                           the path of the binary
       boot linux [OPTIONS] -- PROGRAM ARGS...
                                           run /bin/PROGRAM on Linux 6.1 (Debian's cloud
                                           kernel, fetched once) in the same QEMU and icount
       boot compare [--paths | --several-cpus [--quick]]
                                           the seeds' workloads, microbench and the scenarios
                                           of several CPUs on cfslab and on Linux 6.1, side
                                           by side (--paths: microbench only; --several-cpus: those
                                           of several CPUs only, --quick: each once on
                                           Linux and on cfslab's 6.6, nothing stored);
                                           report in target/compare/REPORT.md, the
                                           documents' tables and docs/compare/ refreshed
       boot compare --check                do the documents' tables match docs/compare/results.json?
       boot docs [run] [gdb] [bench] [seeds]
                                           rerun these generators (make run's output, the gdb
                                           sessions, make bench's benches, the simulator's
                                           seed tables) into docs/data/, then rewrite every
                                           block drawn from them; with none, re-render every
                                           generated block of README.md and docs/ from its data
       boot docs --check                   is every generated block what its data renders?

options:
  --opts STRING        boot options, e.g. \"hz=250 policy=eevdf\" (added to any KEY=VALUE)
  --realtime           no -icount: virtual time follows the host clock (figures vary)
  --icount-shift N     deterministic time, 2^N ns per instruction (default 0)
  --timeout SECS       kill QEMU after SECS seconds (default for run: derived from the
                       scenarios' durations and the icount shift; none for gdb)
  --memory MIB         guest RAM (default 256)
  --smp N              N CPUs (1 to 64): QEMU's -smp N, and for run and gdb the boot
                       option smp=N unless the options give one (default: QEMU's one
                       CPU, no -smp); N,sockets=S,cores=C,threads=T arranges them
  --numa NODES         with --smp: NODES NUMA nodes of consecutive CPUs, the memory split
                       evenly, on a ring (10 apart per hop, 10 from itself)
  --release            build the kernel with optimisations
  --kernel ELF         boot this kernel ELF instead of building one
  --port N             gdb stub port (gdb; default 1234)
  --no-launch          gdb: start QEMU only and print the gdb command to attach
  --verbose            print the kernel path and the exact qemu-system-x86_64 command
  --add FILE           add a host file (a static Linux executable) under /bin in the
                       initramfs (in place of a built-in program of its name); repeat
                       for more
  --busybox            put Debian's busybox (busybox-static, fetched once) and its
                       applets under /bin, in place of the built-ins of their names:
                       `--busybox -- /bin/sh` or `make shell SH=busybox` is its ash
  -- PROGRAM ARGS...   run /bin/PROGRAM (from the initramfs) instead of the scenarios
  --trace FILE         run: boot with trace=on, write the trace as ftrace text to FILE and
                       as Perfetto JSON beside it (FILE with .json); the console shows one
                       line in its place
  --profile            run: afterwards, print the guest instructions per kernel function
                       (from a program's first instruction when one runs); ~10x slower
  --repeat K           run: boot K times (the first one's output shown) and exit with
                       status 6 and the first line that differs unless every run printed
                       the same bytes
  --input FILE         run: type FILE at the console, a line at each shell prompt (^C,
                       ^D, ^U lines are those keys; ^H and ^U inside a line too)
  --interactive        run: this terminal is the console (Ctrl-C goes to cfslab, not
                       QEMU); no timeout. make shell uses it

exit status: 0 success, 1 kernel failure or panic, 2 bad boot options, 3 timeout,
             4 no report from the kernel, 5 host-side error, 6 runs that differ
             (--repeat), 64 usage error";
