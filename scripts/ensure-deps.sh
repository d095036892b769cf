#!/usr/bin/env bash
# Installs what `make run` and `make test` need and a fresh Debian machine may lack:
#   - the pinned Rust toolchain of rust-toolchain.toml (nightly, rust-src, llvm-tools,
#     rustfmt, clippy, target x86_64-unknown-none), through rustup;
#   - qemu-system-x86_64 of version 10 or later, gdb (for `make gdb` and the gdb test) and
#     musl-tools (musl-gcc, for the C programs in userland/c/), through apt-get when
#     running as root; otherwise it prints the one command to run and fails.
# Why QEMU 10: QEMU before 8.1 live-locks a guest of several CPUs under -icount (its
# round-robin TCG gave a spinning vCPU the whole budget; fixed by "accel/tcg/
# tcg-accel-ops-rr: ensure fairness with icount"). Debian 12 ships 7.2, and its
# bookworm-backports suite has 10.0: that suite is added to apt's sources, at the address
# of the machine's own Debian archive, and QEMU comes from it. Everything, one CPU
# included, runs on that QEMU, so there is one emulator behind every figure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rustup >/dev/null 2>&1; then
    echo "cfslab needs rustup: install it from https://rustup.rs, then run make again" >&2
    exit 1
fi
# With no argument, rustup installs the toolchain rust-toolchain.toml pins, with its
# components and target (a quiet no-op when it is already there).
channel=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup toolchain list | grep -q "^$channel"; then
    echo "cfslab: installing the pinned Rust toolchain $channel (once; a few minutes)" >&2
fi
if ! out=$(rustup toolchain install 2>&1); then
    echo "$out" >&2
    exit 1
fi

QEMU_MAJOR=10
qemu_major() {
    qemu-system-x86_64 --version 2>/dev/null |
        sed -n 's/^QEMU emulator version \([0-9]*\).*/\1/p' | grep . || echo 0
}

# Adds CODENAME-backports to apt's sources at the address of the machine's Debian archive
# (its entry for CODENAME in debian.sources or sources.list: no host is written here), and
# prints the suite's name. An entry for the suite that exists already is kept.
add_backports() {
    local codename uri
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || { echo "cfslab: cannot tell this Debian's codename" >&2; return 1; }
    if grep -rqs -- "$codename-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        echo "$codename-backports"
        return
    fi
    uri=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | awk -v suite="$codename" '
        /^URIs:/ { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) { print uri; exit } }
        /^deb / { for (i = 2; i < NF; i++) if ($i ~ /^https?:/ && $(i + 1) == suite) { print $i; exit } }')
    [ -n "$uri" ] || { echo "cfslab: found no Debian archive entry for $codename" >&2; return 1; }
    printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\nSigned-By: %s\n' \
        "$uri" "$codename" /usr/share/keyrings/debian-archive-keyring.gpg \
        >/etc/apt/sources.list.d/cfslab-backports.sources
    echo "$codename-backports"
}

missing=()
if [ "$(qemu_major)" -lt "$QEMU_MAJOR" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "cfslab: installing QEMU $QEMU_MAJOR (several CPUs under -icount need it; once)" >&2
        export DEBIAN_FRONTEND=noninteractive
        suite=$(add_backports)
        apt-get update -qq
        apt-get install -y -qq -t "$suite" qemu-system-x86 >/dev/null
        if [ "$(qemu_major)" -lt "$QEMU_MAJOR" ]; then
            echo "cfslab: $suite gave QEMU $(qemu_major); cfslab needs $QEMU_MAJOR or later" >&2
            exit 1
        fi
    else
        echo "cfslab needs QEMU $QEMU_MAJOR or later (on Debian 12, from bookworm-backports):" \
            "as root, run make deps, then make again" >&2
        exit 1
    fi
fi
command -v gdb >/dev/null 2>&1 || missing+=(gdb)
command -v musl-gcc >/dev/null 2>&1 || missing+=(musl-tools)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "cfslab: installing ${missing[*]} with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "cfslab needs ${missing[*]}: run 'sudo apt-get install ${missing[*]}', then make again" >&2
        exit 1
    fi
fi
