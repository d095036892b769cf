//! `run --profile`: where a run's guest instructions go, function by function. QEMU logs
//! every translated block's instructions (`-d in_asm`) and every block it executes
//! (`-d exec,nochain`: one line per execution, chaining off so none is skipped) into a pipe;
//! a thread counts executions × instructions per block as the lines arrive (the log runs to
//! gigabytes, so it is never written out), and at the end the blocks' addresses are named by
//! the kernel's symbols (`nm`, shifted to `KERNEL_BASE`). Under `-icount` each guest
//! instruction is one tick of virtual time (2^shift ns), so the profile says where the
//! virtual time of the run went — a `rep movs` counts once per iteration, as icount does.
//!
//! The run itself slows down about tenfold while profiled; its figures stay the same (the
//! guest cannot tell). Counting starts at the first instruction of a user program when one
//! runs (` -- `: the first block below the kernel's half once the kernel has run), so that
//! the boot does not swamp the program's system calls.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Mirrors `kernel::KERNEL_BASE` (as gdb.rs does).
use crate::gdb::KERNEL_BASE;

/// Addresses below this are a user program's (the lower half).
const USER_END: u64 = 0x0000_8000_0000_0000;

/// Guest instructions per block start address, summed over the run.
#[derive(Debug, Default)]
pub struct Counts {
    pub by_block: HashMap<u64, u64>,
    pub total: u64,
}

/// Reads QEMU's log from `log` (in_asm blocks and exec lines, interleaved as QEMU wrote
/// them). With `from_user`, nothing counts before the first block in user space.
pub fn count(log: impl BufRead, from_user: bool) -> Counts {
    let mut size: HashMap<u64, u64> = HashMap::new();
    let mut counts = Counts::default();
    let (mut block, mut started, mut kernel_ran) = (None, !from_user, false);
    for line in log.split(b'\n').map_while(Result::ok) {
        if line.starts_with(b"IN:") {
            block = None;
        } else if line.starts_with(b"0x") {
            // `0xADDR:  insn`: one more instruction of the block being listed.
            let Some(pc) = hex_before(&line[2..], b':') else {
                continue;
            };
            // A block is listed again each time it is translated again (a program exec'd
            // anew gets fresh translations of its pages): its size is the latest listing's,
            // not the sum of them.
            let start = *block.get_or_insert_with(|| {
                size.insert(pc, 0);
                pc
            });
            *size.entry(start).or_insert(0) += 1;
        } else if line.starts_with(b"Trace ") {
            // `Trace CPU: HOSTPTR [CS_BASE/PC/FLAGS/CFLAGS] SYMBOL`
            let Some(at) = line.iter().position(|&b| b == b'/') else {
                continue;
            };
            let Some(pc) = hex_before(&line[at + 1..], b'/') else {
                continue;
            };
            // The firmware and the bootloader run at low addresses too, but only before the
            // kernel: the first low address after a kernel block is the program's.
            kernel_ran |= pc >= KERNEL_BASE;
            started |= kernel_ran && pc < USER_END;
            if started {
                let n = size.get(&pc).copied().unwrap_or(1);
                *counts.by_block.entry(pc).or_insert(0) += n;
                counts.total += n;
            }
        }
    }
    counts
}

/// The hexadecimal number at the start of `bytes`, up to `end`.
fn hex_before(bytes: &[u8], end: u8) -> Option<u64> {
    let digits = &bytes[..bytes.iter().position(|&b| b == end)?];
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// The kernel's function symbols, (address as loaded, demangled name), sorted.
pub fn kernel_symbols(kernel: &Path) -> Result<Vec<(u64, String)>, String> {
    let out = Command::new("nm")
        .args(["-C", "--defined-only"])
        .arg(kernel)
        .output()
        .map_err(|e| format!("cannot run nm (binutils) for the profile's names: {e}"))?;
    let mut symbols: Vec<(u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (address, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            "tTwW".contains(kind).then(|| {
                Some((
                    u64::from_str_radix(address, 16).ok()? + KERNEL_BASE,
                    name.into(),
                ))
            })?
        })
        .collect();
    symbols.sort();
    Ok(symbols)
}

/// The profile as text: the `top` functions by instructions, with their share.
pub fn report(counts: &Counts, symbols: &[(u64, String)], top: usize) -> String {
    let name_of = |pc: u64| -> String {
        if pc < USER_END {
            return "<user program>".into();
        }
        match symbols.partition_point(|(a, _)| *a <= pc) {
            0 => "<outside the kernel image>".into(),
            i => symbols[i - 1].1.clone(),
        }
    };
    let mut by_function: HashMap<String, u64> = HashMap::new();
    for (&pc, &n) in &counts.by_block {
        *by_function.entry(name_of(pc)).or_insert(0) += n;
    }
    let mut rows: Vec<_> = by_function.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = format!("profile: {} guest instructions\n", counts.total);
    for (name, n) in rows.into_iter().take(top) {
        let share = 100.0 * n as f64 / counts.total.max(1) as f64;
        out.push_str(&format!("{n:>14} {share:5.1}%  {name}\n"));
    }
    out
}

/// A named pipe for QEMU's log, in the target directory.
pub fn make_pipe() -> Result<PathBuf, String> {
    let path =
        crate::build::target_dir().join(format!("cfslab/profile-{}.fifo", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let status = Command::new("mkfifo")
        .arg(&path)
        .status()
        .map_err(|e| format!("cannot run mkfifo: {e}"))?;
    status
        .success()
        .then_some(path.clone())
        .ok_or_else(|| format!("mkfifo {} failed", path.display()))
}

/// Starts counting what QEMU writes into `pipe`, in a thread.
pub fn start(pipe: PathBuf, from_user: bool) -> std::thread::JoinHandle<Counts> {
    std::thread::spawn(move || {
        let counts = std::fs::File::open(&pipe)
            .map(|f| count(BufReader::with_capacity(1 << 20, f), from_user))
            .unwrap_or_default();
        let _ = std::fs::remove_file(&pipe);
        counts
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
IN: 
0xffffffff80001000:  mov %rax, %rbx
0xffffffff80001003:  ret

IN: 
0x0000000000401000:  syscall

Trace 0: 0x7f20 [00000000/000000000000fff0/00000000/00000000] 
Trace 0: 0x7f00 [00000000/ffffffff80001000/00000000/00000000] 
Trace 0: 0x7f10 [00000000/0000000000401000/00000000/00000000] 
Trace 0: 0x7f00 [00000000/ffffffff80001000/00000000/00000000] 
Trace 0: 0x7f00 [00000000/ffffffff80001000/00000000/00000000] 
";

    #[test]
    fn blocks_count_their_instructions_each_time_they_run() {
        // The firmware's block at the reset vector was never listed: it counts one.
        let all = count(LOG.as_bytes(), false);
        assert_eq!(all.total, 1 + 2 + 1 + 2 + 2);
        assert_eq!(all.by_block[&0xffff_ffff_8000_1000], 6);
        // From the first user block on: the user block and the two kernel runs after it.
        let from_user = count(LOG.as_bytes(), true);
        assert_eq!(from_user.total, 1 + 2 + 2);
        let symbols = [(0xffff_ffff_8000_0ff0, "kernel::f".to_string())];
        let text = report(&from_user, &symbols, 10);
        assert!(
            text.starts_with("profile: 5 guest instructions\n"),
            "{text}"
        );
        assert!(text.contains("4  80.0%  kernel::f\n"), "{text}");
        assert!(text.contains("1  20.0%  <user program>\n"), "{text}");
    }

    #[test]
    fn a_block_translated_again_keeps_its_size() {
        // The same program exec'd three times: its one-instruction block listed each time.
        let listing = "IN: \n0x0000000000401000:  syscall\n\n";
        let trace = "Trace 0: 0x7f10 [00000000/0000000000401000/00000000/00000000] \n";
        let log = [listing, trace].concat().repeat(3);
        let counts = count(log.as_bytes(), false);
        assert_eq!(counts.total, 3);
    }
}
