#!/usr/bin/env bash
# Installs what `make run` and `make test` need and a fresh Debian machine may lack:
#   - the pinned Rust toolchain of rust-toolchain.toml (nightly, rust-src, llvm-tools,
#     rustfmt, clippy, target x86_64-unknown-none), through rustup;
#   - qemu-system-x86_64, gdb (for `make gdb` and the gdb test) and musl-tools (musl-gcc,
#     for the C programs in userland/c/), through apt-get when
#     running as root; otherwise it prints the one command to run and fails.
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

missing=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
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
