//! The console: `print!`/`println!` for output that is the product (banners, figures, the
//! lines tests parse), and the `log` crate's macros (`log::info!`, `log::debug!`, ...) for
//! diagnostics, filtered by the `log=` boot option. Both go to the serial port.

use crate::arch::serial;
use crate::config::LogLevel;
use core::fmt;
use log::{LevelFilter, Metadata, Record};

/// Prints to the serial console.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => ($crate::console::_print(format_args!($($arg)*)));
}

/// Prints to the serial console, with a newline.
#[macro_export]
macro_rules! println {
    () => ($crate::print!("\n"));
    ($($arg:tt)*) => ($crate::console::_print(format_args!("{}\n", format_args!($($arg)*))));
}

#[doc(hidden)]
pub fn _print(args: fmt::Arguments) {
    serial::with_console(|console| {
        // Serial output cannot fail in a way we could report anywhere else.
        let _ = console.write_fmt(args);
    });
}

struct SerialLogger;

impl log::Log for SerialLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            _print(format_args!("[{:<5}] {}\n", record.level(), record.args()));
        }
    }

    fn flush(&self) {}
}

static LOGGER: SerialLogger = SerialLogger;

/// Brings up the serial port and the logger at `info` level.
pub fn init() {
    serial::init();
    // Only fails if a logger is already set, i.e. on a second call: harmless.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(LevelFilter::Info);
}

/// Applies the `log=` boot option.
pub fn set_level(level: LogLevel) {
    log::set_max_level(match level {
        LogLevel::Error => LevelFilter::Error,
        LogLevel::Warn => LevelFilter::Warn,
        LogLevel::Info => LevelFilter::Info,
        LogLevel::Debug => LevelFilter::Debug,
        LogLevel::Trace => LevelFilter::Trace,
    });
}
