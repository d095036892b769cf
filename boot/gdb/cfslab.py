# cfslab's gdb commands, in the spirit of Linux's scripts/gdb (`lx-ps`) and xv6's .gdbinit.
# `make gdb` sources this file from the script it writes (boot/src/gdb.rs).
#
#   cfslab-ps          every task: pid, name, uid, nice, state, vruntime, sum_exec,
#                      switches
#   cfslab-rq [CPU]    /proc/sched_debug for one CPU (default: the selected thread's, as
#                      QEMU shows each vCPU as a thread): the policy and its tunables,
#                      the CPU's counters, each runqueue (per group, then the root), the tasks
#   cfslab-trace [N]   the last N scheduler events (default 20) as ftrace text; without
#                      trace=on the kernel keeps the last 256
#   cfslab-program NAME  load the symbols of user program NAME (userland/, static and
#                      non-PIE, so no offset): then `hbreak NAME::run` stops in it
#
# How: each command calls the kernel's `cfslab_gdb_dump` (kernel/src/sched/debugger.rs) in
# the stopped kernel, which formats the same text `log=debug` prints into a buffer, and
# reads the buffer back. The call runs with interrupts masked (a timer interrupt must not
# switch tasks under it) and the other vCPUs left stopped; gdb restores every register
# afterwards. A CPU stopped in its idle task's `hlt` is woken first by an NMI
# (`wake_if_halted`).

import gdb

PS, RQ, TRACE = 0, 1, 2
IF_FLAG = 0x200
HLT = b"\xf4"


def cpu_of(thread):
    """The CPU a gdb thread is: QEMU's stub names vCPU n thread n + 1."""
    return thread.ptid[1] - 1


def wake_if_halted():
    """The selected CPU, if stopped in `hlt` (its idle task), would not run a call: QEMU
    keeps it halted until it takes an interrupt, and the call masks them. It is woken by an
    NMI the kernel takes as the debugger's (kernel/src/arch/x86_64/debugger_nmi.rs): every
    CPU is marked first, since QEMU's `nmi` reaches them all."""
    pc = int(gdb.parse_and_eval("$pc"))
    before = gdb.selected_inferior().read_memory(pc - 1, 1).tobytes()
    if before != HLT:
        return
    flags = gdb.parse_and_eval("&kernel::arch::x86_64::debugger_nmi::DEBUGGER_NMI")
    size = int(flags.dereference().type.sizeof)
    gdb.selected_inferior().write_memory(int(flags), b"\x01" * size)
    try:
        gdb.execute("monitor nmi", to_string=True)
    except gdb.error as e:
        # No NMI came: the marks go, so that a later NMI is not taken for the debugger's.
        gdb.selected_inferior().write_memory(int(flags), b"\x00" * size)
        raise gdb.GdbError("cfslab: CPU 0 is halted and QEMU's monitor did not wake it (%s)" % e)


def kernel_dump(what, n=0):
    """Runs the kernel's formatter for dump `what` and returns its text."""
    try:
        function = gdb.parse_and_eval("kernel::sched::debugger::cfslab_gdb_dump")
    except gdb.error:
        raise gdb.GdbError("cfslab: no kernel symbols (is the script's symbol-file loaded?)")
    selected = gdb.selected_thread()
    if selected is None:
        raise gdb.GdbError("cfslab: no thread (has QEMU started?)")
    # The call runs on CPU 0: an AP sits halted, and would not run it.
    boot_cpu = [t for t in gdb.selected_inferior().threads() if cpu_of(t) == 0]
    if boot_cpu and boot_cpu[0] != selected:
        boot_cpu[0].switch()
    wake_if_halted()
    eflags = int(gdb.parse_and_eval("$eflags"))
    locking = gdb.parameter("scheduler-locking")
    try:
        gdb.execute("set $eflags = %d" % (eflags & ~IF_FLAG), to_string=True)
        # Only CPU 0 runs the call (gdb would resume them all): the others stay stopped,
        # so nothing changes the state the kernel reads without its lock.
        gdb.execute("set scheduler-locking on", to_string=True)
        length = int(function(what, n))
    finally:
        gdb.execute("set scheduler-locking %s" % locking, to_string=True)
        gdb.execute("set $eflags = %d" % eflags, to_string=True)
        if selected.is_valid() and gdb.selected_thread() != selected:
            selected.switch()
    if length == 0:
        return "cfslab: the scheduler has not started yet (stop later than kernel_main)\n"
    address = int(gdb.parse_and_eval("&kernel::sched::debugger::CFSLAB_GDB_TEXT"))
    text = gdb.selected_inferior().read_memory(address, length).tobytes()
    return text.decode("utf-8", "replace")


class Dump(gdb.Command):
    def __init__(self, name, what, takes_count):
        super().__init__(name, gdb.COMMAND_STATUS)
        self.what = what
        self.takes_count = takes_count

    def invoke(self, argument, from_tty):
        n = 0
        if self.takes_count:
            argument = argument.strip()
            try:
                n = int(argument) if argument else 20
            except ValueError:
                raise gdb.GdbError("usage: cfslab-trace [N]  (N: how many events)")
            if n < 1:
                raise gdb.GdbError("cfslab-trace: N must be at least 1")
        gdb.write(kernel_dump(self.what, n))


class CfslabPs(Dump):
    """Every task: pid, name, uid, nice, state, vruntime, sum_exec, switches."""

    def __init__(self):
        super().__init__("cfslab-ps", PS, False)


class CfslabRq(gdb.Command):
    """cfslab-rq [CPU]: /proc/sched_debug for one CPU (default: the selected thread's)."""

    def __init__(self):
        super().__init__("cfslab-rq", gdb.COMMAND_STATUS)

    def invoke(self, argument, from_tty):
        argument = argument.strip()
        if argument:
            try:
                cpu = int(argument)
            except ValueError:
                raise gdb.GdbError("usage: cfslab-rq [CPU]  (CPU: a number, 0 for the first)")
            if cpu < 0:
                raise gdb.GdbError("cfslab-rq: CPU must be 0 or more")
        else:
            thread = gdb.selected_thread()
            if thread is None:
                raise gdb.GdbError("cfslab-rq: no thread (has QEMU started?)")
            cpu = cpu_of(thread)
        gdb.write(kernel_dump(RQ, cpu))


class CfslabTrace(Dump):
    """cfslab-trace [N]: the last N scheduler events (default 20) as ftrace text."""

    def __init__(self):
        super().__init__("cfslab-trace", TRACE, True)


class CfslabProgram(gdb.Command):
    """cfslab-program NAME: load the symbols of the user program NAME."""

    def __init__(self):
        super().__init__("cfslab-program", gdb.COMMAND_FILES)

    def invoke(self, argument, from_tty):
        name = argument.strip()
        if not name:
            raise gdb.GdbError("usage: cfslab-program NAME  (hello, ustest, crash, ...)")
        path = gdb.parse_and_eval("$cfslab_userland").string() + "/" + name
        gdb.execute("add-symbol-file " + path)


CfslabPs()
CfslabRq()
CfslabTrace()
CfslabProgram()
