# cfslab — the commands of README.md (docs/ says more). The host tool behind them is the
# `boot` crate.
#
#   make run [OPTS="key=value ..."] [REALTIME=1] [TIMEOUT=SECS] [SMP=N] [NUMA=NODES]
#                                                  boot the kernel with boot options
#                                                  (SMP=N: N CPUs, here and for shell and gdb;
#                                                  SMP=N,sockets=S,cores=C,threads=T arranges
#                                                  them, NUMA=NODES puts them in NUMA nodes)
#   make shell [OPTS="key=value ..."] [SH=busybox] the shell on this terminal (run=shell;
#                                                  SH=busybox: Debian's busybox ash)
#   make test                                      every test (host, in-QEMU, system)
#   make gdb [OPTS=...] [GDBPORT=1234]             QEMU paused + gdb stopped at the entry,
#                                                  the policy unoptimised, cfslab-* helpers
#   make qemu-gdb [OPTS=...] [GDBPORT=1234]        QEMU paused only; prints the gdb command
#   make lab [SECONDS=10] [SEEDS=3]                the full experiment matrix -> target/lab/,
#                                                  docs/lab/ and docs/experiments.md's tables
#   make bench                                     scheduler operation costs (host and kernel),
#                                                  system-call paths on cfslab and on Linux
#                                                  -> docs/data/, docs/performance.md's tables
#   make compare                                   the seeds' workloads, those paths and
#                                                  scenarios of several CPUs on cfslab
#                                                  beside Linux 6.1 in the same QEMU
#   make wasted                                    the Wasted Cores lab: the paper's bugs and
#                                                  their fixes in the N-CPU simulator and
#                                                  the kernel -> docs/data/, docs/wasted/,
#                                                  docs/wasted-cores.md's tables, traces in
#                                                  target/wasted/
#   make docs                                      every generated figure of README.md and
#                                                  docs/ made again, then checked (slow)
#   make clean

OPTS ?=
GDBPORT ?= 1234
SH ?=
REALTIME ?=
TIMEOUT ?=
SMP ?=
NUMA ?=

BOOT := cargo run -q -p boot --
BOOT_FLAGS := $(if $(REALTIME),--realtime) $(if $(SMP),--smp $(SMP)) $(if $(NUMA),--numa $(NUMA))
RUN_FLAGS := $(if $(TIMEOUT),--timeout $(TIMEOUT))

.PHONY: run shell test lint lab bench compare wasted docs gdb qemu-gdb clean deps

deps:
	@scripts/ensure-deps.sh

# The optimised kernel, as the lab boots it, so that its figures are the lab's.
run: deps
	@$(BOOT) run --release $(BOOT_FLAGS) $(RUN_FLAGS) --opts "$(OPTS)"

# The shell on the console (this terminal; Ctrl-C goes to cfslab): start hogs and sleepers,
# as other uids and nice values (help lists the commands); `exit` ends the session.
shell: deps
	@$(BOOT) run --release $(BOOT_FLAGS) $(if $(filter busybox,$(SH)),--busybox) --interactive --opts "run=shell $(OPTS)"

# Host tests of the scheduler crate, the boot options (with their 10^5-case fuzz) and the
# boot tool, the kernel's tests inside QEMU (through cargo's runner, see .cargo/config.toml;
# the lock-order checker's again in the optimised build, where it runs too), then the system
# tests that boot the kernel as `make run` does.
test: deps lint
	cargo test -p sched -- --nocapture --test-threads 1
	cargo test -p bootopts
	cargo test -p boot
	cargo test -p kernel --target x86_64-unknown-none --no-fail-fast
	cargo test -p kernel --target x86_64-unknown-none --release --test lock_order --test lock_order_keys
	cargo test -p systests

lint:
	cargo fmt --all -- --check
	cargo clippy -q -p sched -p bootopts -p boot -p systests --all-targets -- -D warnings
	cargo clippy -q -p kernel --target x86_64-unknown-none --all-targets -- -D warnings
	cd userland && cargo fmt --all -- --check
	cd userland && cargo clippy -q -- -D warnings

# The full experiment matrix (every seed x its variants x phase seeds 1..SEEDS) in the
# kernel: target/lab/REPORT.md, SVG plots and traces; then docs/lab/ (plots, results.json)
# and the tables of docs/experiments.md are refreshed. SECONDS= sets each run's virtual window.
SECONDS ?= 10
SEEDS ?= 3
lab: deps
	@$(BOOT) lab --seconds $(SECONDS) --seeds $(SEEDS)

# Scheduler operation costs on the host (criterion), the kernel's context-switch and
# wake-up paths in QEMU (`boot docs bench` runs both benches and keeps their figures in
# docs/data/bench.json), and the system-call paths seen from a user program (the optimised
# kernel at icount shift 0: one guest instruction per nanosecond), then the same program on
# Linux 6.1 in the same QEMU and icount (`boot linux`, Debian's cloud kernel, fetched once;
# docs/data/paths.json); the tables of docs/performance.md are rewritten from them.
bench: deps
	@$(BOOT) docs bench
	@$(BOOT) compare --paths

# The seeds' workloads as user programs and microbench, on cfslab and on Linux 6.1 in the
# same QEMU and icount, side by side, then hogs, wake-ups and two Wasted Cores workloads on
# 4 and 8 CPUs (three runs of Linux, one of cfslab, which repeats): target/compare/REPORT.md
# and its CDF plots; then docs/compare/ and the tables of docs/compare.md and
# docs/performance.md.
compare: deps
	@$(BOOT) compare

# The Wasted Cores lab (docs/wasted-cores.md): each of the paper's four load-balancing bugs,
# with Linux 4.1's behaviour and with each fix, in the N-CPU simulator at the paper's scale
# (64 CPUs in 8 nodes), then each kernel scenario on 8 vCPUs in 4 nodes, traced;
# docs/data/wasted-{sim,kernel}.json, the tables of docs/wasted-cores.md, a picture per run
# in docs/wasted/, and each kernel run's trace (ftrace text, Perfetto JSON) in target/wasted/.
wasted: deps
	@$(BOOT) docs wasted

# Every generated figure of README.md and docs/ made again by the tool that writes it, then
# all of them checked (docs/testing.md): the lab, compare (with the system-call paths), the
# benches, make run's output, the gdb sessions, the simulator's seed tables and the shell
# session of docs/shell.md. Slow: it runs make lab, make compare and make bench (about an
# hour on a 2-core machine). `cargo boot docs` re-renders the blocks from their stored data
# without running anything; `cargo boot docs --check` checks them (make test does too).
docs: deps
	@$(BOOT) lab --seconds $(SECONDS) --seeds $(SEEDS)
	@$(BOOT) compare
	@$(BOOT) docs bench run gdb seeds wasted
	CFSLAB_BLESS=1 cargo test -p systests --test live_scheduler the_documented_session_is_real
	@$(BOOT) docs --check

gdb: deps
	@$(BOOT) gdb $(BOOT_FLAGS) --port $(GDBPORT) --opts "$(OPTS)"

qemu-gdb: deps
	@$(BOOT) gdb --no-launch $(BOOT_FLAGS) --port $(GDBPORT) --opts "$(OPTS)"

clean:
	cargo clean
