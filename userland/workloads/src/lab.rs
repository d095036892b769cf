//! Who started the program, and so how its lines are labelled. On its own (natively on Linux,
//! or by hand on cfslab) a program labels its `RESULT` lines with its own name
//! (`"program":"lat3"`). Started by cfslab's lab for a scenario, it finds the scenario and the
//! scheduler's settings in its environment, as a program finds its locale, and writes the
//! lab's own lines (DESIGN.md, "Output"): each human line prefixed with the scenario's name,
//! and `RESULT` lines with `"scenario"`, `"policy"`, `"era"` and `"features"`. The program
//! cannot know the kernel's settings; whoever started it does.
//!
//! The variables, set by the kernel's lab (`kernel/src/lab/programs.rs`):
//! `CFSLAB_SCENARIO`, `CFSLAB_POLICY`, `CFSLAB_ERA`, `CFSLAB_FEATURES`.

use alloc::format;
use alloc::string::String;

/// The scenario this program runs in, if the lab started it.
pub fn scenario() -> Option<&'static str> {
    rt::env("CFSLAB_SCENARIO")
}

/// `"program":"NAME"` on its own; `"scenario":"NAME"` in the lab.
pub fn origin(program: &str) -> String {
    match scenario() {
        Some(name) => format!("\"scenario\":\"{name}\""),
        None => format!("\"program\":\"{program}\""),
    }
}

/// The scheduler's settings as `,"policy":..,"era":..,"features":..` in the lab; nothing on
/// its own.
pub fn settings() -> String {
    match scenario() {
        Some(_) => format!(
            ",\"policy\":\"{}\",\"era\":\"{}\",\"features\":\"{}\"",
            rt::env("CFSLAB_POLICY").unwrap_or("?"),
            rt::env("CFSLAB_ERA").unwrap_or("?"),
            rt::env("CFSLAB_FEATURES").unwrap_or("")
        ),
        None => String::new(),
    }
}

/// What starts a human line: `SCENARIO: ` in the lab, nothing on its own.
pub fn line_prefix() -> String {
    scenario().map_or(String::new(), |name| format!("{name}: "))
}

/// Prints one human line, after [`line_prefix`].
pub fn say(line: core::fmt::Arguments) {
    rt::println!("{}{line}", line_prefix());
}

/// [`say`] with `format!`'s syntax.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::lab::say(format_args!($($arg)*))
    };
}
