//! Boot options: the `bootopts` crate's grammar, read from fw_cfg at boot (see `lib.rs`).
//!
//! The parser lives in its own pure crate so that the host can fuzz it; the tests below run
//! its hostile-input cases again here, in the kernel's own environment (no_std, the kernel
//! heap, the kernel's panic handler), where a panic would bring the machine down.

pub use bootopts::*;

/// The fw_cfg file the boot tool writes the options into.
pub const FW_CFG_NAME: &str = "opt/cfslab/cmdline";

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    /// Every rejection is one printable ASCII line naming an option.
    fn assert_one_line(cmdline: &str) {
        if let Err(e) = Config::parse(cmdline) {
            let line = e.to_string();
            assert!(
                line.chars().all(|c| c.is_ascii() && !c.is_ascii_control()),
                "{line:?}"
            );
            assert!(!e.option.is_empty(), "{line}");
        }
    }

    #[test_case]
    fn hostile_command_lines_give_one_line_errors_in_the_kernel() {
        let long = "x".repeat(MAX_CMDLINE_BYTES + 1);
        let huge_value = alloc::format!("run={}", "ö".repeat(1000));
        for cmdline in [
            long.as_str(),
            huge_value.as_str(),
            "run=custom tasks=hog%-9223372036854775808",
            "run=custom tasks=hog%18446744073709551615",
            "run=custom tasks=makej:99999999999999999999",
            "hz=\u{0} log=\u{7f}",
            "=== ,,, :::",
        ] {
            assert!(Config::parse(cmdline).is_err(), "{cmdline:?} accepted");
            assert_one_line(cmdline);
        }
        assert!(Config::parse_bytes(&[0xff, 0xfe, b'=']).is_err());
    }

    #[test_case]
    fn random_bytes_never_panic_in_the_kernel() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        const PIECES: [&str; 12] = [
            "run=",
            "tasks=",
            "hog",
            "%-",
            "*",
            "@",
            ":",
            ",",
            "99999999999999999999",
            " ",
            "policy=o1",
            "features=",
        ];
        for _ in 0..2000 {
            let mut cmdline = String::new();
            for _ in 0..next() % 10 {
                cmdline.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            assert_one_line(&cmdline);
        }
    }
}
