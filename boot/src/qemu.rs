//! Starting QEMU: the machine cfslab runs on, the exact command line (printable with
//! `--verbose`), and running it to the end with a timeout while its serial output streams
//! to our stdout (`serial_output`) and a script types at its console (`console_input`).

use crate::console_input::{self, ConsoleInput};
use crate::serial_output::forward_output;
pub use crate::serial_output::{Echo, extract_trace};
use crate::status::Status;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Under `-icount shift=N` every guest instruction advances virtual time by 2^N ns, so time
/// depends only on what the guest executes: the same figures on every run and machine.
/// Shift 0 is a 1 GHz, one-instruction-per-cycle CPU, close to the 2008-era machines the seeds
/// ran on.
pub const DEFAULT_ICOUNT_SHIFT: u32 = 0;

/// The date the machine's RTC starts from under `-icount` (`-rtc base=`), instead of the
/// host's: QEMU's RTC keeps timers of its own on the virtual clock — its alarm's among
/// them, set from the date it starts with (`hw/rtc/mc146818rtc.c`) — and every timer of
/// the machine cuts the vCPUs' turns. With the host's date, when a run starts would reach
/// its figures. Nothing of cfslab's reads the RTC; Linux reads it for its wall clock.
pub const RTC_BASE: &str = "2026-01-01T00:00:00";

/// Enough for the 16 MiB minimum heap with a comfortable margin.
pub const DEFAULT_MEMORY_MIB: u32 = 256;

/// The QEMU binary; override with `QEMU=/path/to/qemu-system-x86_64`.
pub fn qemu_binary() -> String {
    std::env::var("QEMU").unwrap_or_else(|_| "qemu-system-x86_64".into())
}

/// One QEMU machine for one kernel image.
#[derive(Debug, Clone)]
pub struct Machine {
    pub image: PathBuf,
    /// Boot options, passed through fw_cfg; empty for none.
    pub options: String,
    /// `Some(N)`: deterministic `-icount shift=N,sleep=off`; `None`: real time.
    pub icount_shift: Option<u32>,
    pub memory_mib: u32,
    /// `Some(n)`: `-smp n`; `None` leaves QEMU's default of one CPU, with no flag at all, so
    /// that the command lines (and the figures) of uniprocessor runs stay what they were.
    pub smp: Option<u32>,
    /// `Some`: the CPUs' sockets, cores and threads, and NUMA nodes (`-smp` with its
    /// sub-options instead of `-smp n`, and `-numa`).
    pub shape: Option<crate::shape::Shape>,
    /// `Some(port)`: start paused with a gdb stub on that port.
    pub gdb_port: Option<u16>,
    /// The initramfs (fw_cfg `opt/cfslab/initramfs`): the user programs, the lab's workloads among them.
    pub initramfs: Option<PathBuf>,
    /// `-icount ...,sleep=on`: while no timer is due, virtual time follows the host clock
    /// instead of leaping to the next deadline (what a gdb session needs, see gdb.rs).
    pub icount_sleep: bool,
    /// `Some`: boot Linux instead of cfslab's disk image (linux.rs); `options` and
    /// `initramfs` are then unused.
    pub linux: Option<LinuxBoot>,
    /// `Some(pipe)`: QEMU logs each translated and each executed block there (profile.rs).
    pub profile_log: Option<PathBuf>,
    /// What is typed at the console (console_input.rs).
    pub console_input: ConsoleInput,
}

/// QEMU's own Linux loader: `-kernel`, `-initrd`, `-append`.
#[derive(Debug, Clone)]
pub struct LinuxBoot {
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub append: String,
}

/// QEMU's option syntax uses commas as separators; a literal comma in a value is doubled.
pub fn escape_option_value(value: &str) -> String {
    value.replace(',', ",,")
}

impl Machine {
    pub fn new(image: PathBuf) -> Self {
        Machine {
            image,
            options: String::new(),
            icount_shift: Some(DEFAULT_ICOUNT_SHIFT),
            memory_mib: DEFAULT_MEMORY_MIB,
            smp: None,
            shape: None,
            gdb_port: None,
            initramfs: None,
            icount_sleep: false,
            linux: None,
            profile_log: None,
            console_input: ConsoleInput::Nothing,
        }
    }

    /// The arguments after the binary name.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = match &self.linux {
            Some(linux) => vec![
                "-kernel".into(),
                linux.kernel.display().to_string(),
                "-initrd".into(),
                linux.initrd.display().to_string(),
                "-append".into(),
                linux.append.clone(),
            ],
            None => vec![
                "-drive".into(),
                format!(
                    "format=raw,file={}",
                    escape_option_value(&self.image.display().to_string())
                ),
            ],
        };
        args.extend([
            // Writes go to a throw-away overlay: the kept image never changes, and several
            // QEMUs (parallel tests) can share it without fighting over its write lock.
            "-snapshot".into(),
            // The kernel's exit status: value v written to port 0xf4 → QEMU exits (v << 1) | 1.
            "-device".into(),
            "isa-debug-exit,iobase=0xf4,iosize=0x04".into(),
            "-display".into(),
            "none".into(),
            "-monitor".into(),
            "none".into(),
            // No network card: nothing uses one, and SeaBIOS would spend time probing its
            // option ROM (which a minimal QEMU install may not even have).
            "-nic".into(),
            "none".into(),
            // A triple fault must end the run, not reboot into it again.
            "-no-reboot".into(),
            // QEMU's default CPU, with UMIP (TCG emulates it): user programs may not read
            // where the kernel's descriptor tables are, as on the CPUs Linux runs on today.
            "-cpu".into(),
            "qemu64,+umip".into(),
            "-m".into(),
            format!("{}M", self.memory_mib),
        ]);
        if let Some(shape) = self.shape {
            args.extend(shape.qemu_args(self.memory_mib));
        } else if let Some(n) = self.smp {
            args.extend(["-smp".into(), n.to_string()]);
        }
        if let Some(shift) = self.icount_shift {
            args.extend([
                "-icount".into(),
                format!(
                    "shift={shift},sleep={}",
                    if self.icount_sleep { "on" } else { "off" }
                ),
                "-rtc".into(),
                format!("clock=vm,base={RTC_BASE}"),
            ]);
        }
        if !self.options.is_empty() && self.linux.is_none() {
            args.push("-fw_cfg".into());
            args.push(format!(
                "name=opt/cfslab/cmdline,string={}",
                escape_option_value(&self.options)
            ));
        }
        if let Some(archive) = self.initramfs.as_ref().filter(|_| self.linux.is_none()) {
            args.push("-fw_cfg".into());
            args.push(format!(
                "name=opt/cfslab/initramfs,file={}",
                escape_option_value(&archive.display().to_string())
            ));
        }
        args.extend(self.serial_args());
        if let Some(pipe) = &self.profile_log {
            args.extend([
                "-d".into(),
                "exec,nochain,in_asm".into(),
                "-D".into(),
                pipe.display().to_string(),
            ]);
        }
        if let Some(port) = self.gdb_port {
            args.extend(["-gdb".into(), format!("tcp:127.0.0.1:{port}"), "-S".into()]);
        }
        args
    }

    /// The full command line, quoted for a POSIX shell: what `--verbose` prints.
    pub fn command_line(&self) -> String {
        std::iter::once(qemu_binary())
            .chain(self.args())
            .map(|a| shell_quote(&a))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The serial port on QEMU's stdio. A terminal handed over (`--interactive`) keeps
    /// Ctrl-C for the guest (`signal=off`): it is the shell's, not QEMU's.
    fn serial_args(&self) -> [String; 4] {
        match self.console_input {
            ConsoleInput::Terminal => [
                "-chardev".into(),
                "stdio,id=console,signal=off".into(),
                "-serial".into(),
                "chardev:console".into(),
            ],
            _ => [
                "-chardev".into(),
                "stdio,id=console".into(),
                "-serial".into(),
                "chardev:console".into(),
            ],
        }
    }

    /// Starts QEMU with its serial output on a pipe (or inherited, if `inherit_stdout`), and
    /// its input as `console_input` says.
    pub fn spawn(&self, inherit_stdout: bool) -> Result<Child, String> {
        Command::new(qemu_binary())
            .args(self.args())
            .stdin(match self.console_input {
                ConsoleInput::Nothing => Stdio::null(),
                ConsoleInput::Script(_) => Stdio::piped(),
                ConsoleInput::Terminal => Stdio::inherit(),
            })
            .stdout(if inherit_stdout {
                Stdio::inherit()
            } else {
                Stdio::piped()
            })
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| match e.kind() {
                ErrorKind::NotFound => format!(
                    "{} not found: install QEMU (Debian: apt-get install qemu-system-x86)",
                    qemu_binary()
                ),
                _ => format!("cannot start {}: {e}", qemu_binary()),
            })
    }
}

/// Quotes `arg` for a POSIX shell if it needs it.
pub fn shell_quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Waits for `child` to exit, killing it after `timeout`; returns the boot tool's status.
pub fn wait_with_timeout(child: &mut Child, timeout: Option<Duration>) -> Result<Status, String> {
    let start = Instant::now();
    loop {
        if let Some(exit) = child
            .try_wait()
            .map_err(|e| format!("waiting for QEMU: {e}"))?
        {
            return Ok(Status::from_qemu(exit.code()));
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Status::Timeout);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wall-clock facts about one run, for `--verbose` and the README's boot-time figure.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// From starting QEMU to the kernel's first output (its banner).
    pub to_banner: Option<Duration>,
    /// From starting QEMU to its exit.
    pub total: Duration,
}

/// Runs the machine to its end, streaming its serial output to stdout as `echo` says;
/// returns the status, the timing and everything the kernel printed.
pub fn run(
    machine: &Machine,
    timeout: Option<Duration>,
    echo: Echo,
) -> Result<(Status, Timing, String), String> {
    let start = Instant::now();
    let mut child = machine.spawn(false)?;
    let tap = Arc::new(Mutex::new(Vec::new()));
    let forwarder = forward_output(&mut child, echo, Some(tap.clone()));
    if let (ConsoleInput::Script(keys), Some(stdin)) = (&machine.console_input, child.stdin.take())
    {
        console_input::type_in(stdin, keys.clone(), tap);
    }
    let status = wait_with_timeout(&mut child, timeout)?;
    let total = start.elapsed();
    let output = forwarder.and_then(|f| f.join().ok());
    let to_banner = output
        .as_ref()
        .and_then(|o| o.first_output)
        .map(|t| t.duration_since(start));
    Ok((
        status,
        Timing { to_banner, total },
        output.map(|o| o.text).unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_in_options_are_doubled_for_qemu() {
        assert_eq!(
            escape_option_value("run=seed000-s1,seed003"),
            "run=seed000-s1,,seed003"
        );
        let mut m = Machine::new("k.img".into());
        m.options = "features=A,B hz=100".into();
        assert!(
            m.args()
                .contains(&"name=opt/cfslab/cmdline,string=features=A,,B hz=100".to_string())
        );
    }

    #[test]
    fn deterministic_by_default_realtime_on_request() {
        let mut m = Machine::new("k.img".into());
        let args = m.args().join(" ");
        assert!(
            args.contains("-icount shift=0,sleep=off -rtc clock=vm,base=2026-01-01T00:00:00"),
            "{args}"
        );
        assert!(
            !args.contains("-fw_cfg"),
            "no options, no fw_cfg file: {args}"
        );
        m.icount_shift = None;
        assert!(!m.args().join(" ").contains("-icount"));
    }

    #[test]
    fn one_cpu_unless_asked_for_more() {
        let mut m = Machine::new("k.img".into());
        assert!(!m.args().contains(&"-smp".to_string()));
        m.smp = Some(2);
        assert!(m.args().join(" ").contains(" -m 256M -smp 2 "));
    }

    #[test]
    fn gdb_mode_starts_paused_with_a_stub() {
        let mut m = Machine::new("k.img".into());
        m.gdb_port = Some(4321);
        assert!(m.args().join(" ").ends_with("-gdb tcp:127.0.0.1:4321 -S"));
    }

    #[test]
    fn the_printed_command_line_is_shell_safe() {
        let mut m = Machine::new("/tmp/a b/k.img".into());
        m.options = "hz=100 run=lab".into();
        let line = m.command_line();
        assert!(line.contains("'format=raw,file=/tmp/a b/k.img'"), "{line}");
        assert!(
            line.contains("'name=opt/cfslab/cmdline,string=hz=100 run=lab'"),
            "{line}"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
