#!/usr/bin/env python3
"""Prints a gdb session against cfslab as a transcript: each command after "(gdb) ", then
what gdb answered — how the documents' gdb sessions are made (`boot docs gdb` runs it).

    scripts/gdb-transcript.py [--port N] "BOOT OPTIONS" "gdb command" ["gdb command" ...]

It starts `cargo boot gdb --no-launch` (QEMU paused, the gdb profile's kernel, the helper
script the boot tool writes), runs gdb in batch mode on that script with each command echoed
before it runs, and ends the session when the commands are done (end them with `kill`).
`make gdb` runs QEMU with `-icount sleep=on`, so the scheduler's state at a stop varies a
little from run to run; addresses move with every change to the code.
"""
import argparse
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", default="4321", help="the gdb stub's TCP port")
    parser.add_argument("options", help='boot options, e.g. "run=custom tasks=sleeper:10ms,hog"')
    parser.add_argument("commands", nargs="+", help="gdb commands, in order")
    args = parser.parse_args()
    boot = subprocess.Popen(
        ["cargo", "run", "-q", "-p", "boot", "--", "gdb", "--no-launch", "--timeout", "600",
         "--port", args.port, "--opts", args.options],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    first = boot.stdout.readline().strip()
    if not first.startswith("gdb -q -x "):
        print(f"gdb-transcript: unexpected line from the boot tool: {first}", file=sys.stderr)
        boot.kill()
        return 1
    gdb = ["timeout", "300", "gdb", "-batch", "-x", first[len("gdb -q -x "):]]
    for command in args.commands:
        echoed = command.replace("\\", "\\\\")
        gdb += ["-ex", f"echo (gdb) {echoed}\\n", "-ex", command]
    # No terminal for gdb: one that finds it takes it over as its foreground process group.
    session = subprocess.run(gdb, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    print("\n".join(line for line in session.stdout.splitlines() if line))
    try:
        boot.wait(timeout=60)
    except subprocess.TimeoutExpired:
        boot.kill()
    return session.returncode


if __name__ == "__main__":
    sys.exit(main())
