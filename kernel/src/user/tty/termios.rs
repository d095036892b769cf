//! The terminal's settings, Linux's `struct termios` in the kernel's layout (36 bytes:
//! c_iflag, c_oflag, c_cflag, c_lflag, c_line, then 19 control characters), as TCGETS
//! gives them and TCSETS takes them. The line discipline (`super`) honours ICANON, ECHO,
//! ISIG and ICRNL, and the control characters VINTR, VQUIT, VSUSP, VERASE, VKILL, VEOF,
//! VMIN and VTIME; the other flags are kept and read back.

/// The settings, kept as the bytes a program reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Termios(pub [u8; 36]);

/// c_lflag bits.
pub const ISIG: u32 = 0x1;
pub const ICANON: u32 = 0x2;
pub const ECHO: u32 = 0x8;
/// c_iflag: turn a typed CR into NL.
pub const ICRNL: u32 = 0x100;

/// Indices into c_cc.
pub const VINTR: usize = 0;
pub const VQUIT: usize = 1;
pub const VERASE: usize = 2;
pub const VKILL: usize = 3;
pub const VEOF: usize = 4;
pub const VTIME: usize = 5;
pub const VMIN: usize = 6;
pub const VSUSP: usize = 10;

impl Termios {
    /// Linux's defaults for a console: c_iflag ICRNL | IXON, c_oflag OPOST | ONLCR, c_cflag
    /// B38400 | CS8 | CREAD | HUPCL, c_lflag ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL
    /// | ECHOKE | IEXTEN, line 0, and the control characters ^C, ^\, DEL, ^U, ^D, VTIME 0,
    /// VMIN 1, VSWTC 0, ^Q, ^S, ^Z, VEOL 0, ^R, ^O, ^W, ^V, VEOL2 0.
    pub const DEFAULT: Termios = {
        let mut t = [0u8; 36];
        let flags: [u32; 4] = [0x500, 0x5, 0x4bf, 0x8a3b];
        let mut i = 0;
        while i < 4 {
            let b = flags[i].to_le_bytes();
            t[4 * i] = b[0];
            t[4 * i + 1] = b[1];
            t[4 * i + 2] = b[2];
            t[4 * i + 3] = b[3];
            i += 1;
        }
        let cc = [
            0x03, 0x1c, 0x7f, 0x15, 0x04, 0, 1, 0, 0x11, 0x13, 0x1a, 0, 0x12, 0x0f, 0x17, 0x16, 0,
        ];
        let mut j = 0;
        while j < cc.len() {
            t[17 + j] = cc[j];
            j += 1;
        }
        Termios(t)
    };

    fn word(&self, i: usize) -> u32 {
        u32::from_le_bytes([
            self.0[4 * i],
            self.0[4 * i + 1],
            self.0[4 * i + 2],
            self.0[4 * i + 3],
        ])
    }

    /// c_iflag.
    pub fn iflag(&self) -> u32 {
        self.word(0)
    }

    /// c_lflag.
    pub fn lflag(&self) -> u32 {
        self.word(3)
    }

    /// Control character `index` of c_cc.
    pub fn cc(&self, index: usize) -> u8 {
        self.0[17 + index]
    }

    /// Whether `byte` is control character `index` (0 disables one: _POSIX_VDISABLE).
    pub fn is(&self, byte: u8, index: usize) -> bool {
        byte != 0 && self.cc(index) == byte
    }
}

/// The terminal's `struct winsize` as TIOCGWINSZ gives it: 24 rows, 80 columns, and two
/// unused pixel sizes.
pub const WINSIZE: [u8; 8] = [24, 0, 80, 0, 0, 0, 0, 0];
