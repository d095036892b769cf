//! The in-kernel test harness (`custom_test_frameworks`): `cargo test --target
//! x86_64-unknown-none` builds each test binary as a kernel, the boot tool boots it in QEMU,
//! and this harness runs the `#[test_case]` functions one after another, printing libtest-like
//! lines on the serial console. The run's exit status is the verdict.

use crate::{ExitCode, exit, print, println};
use core::panic::PanicInfo;

/// A test the harness can run: any `Fn()`, named by its type (the function's path).
pub trait Testable {
    fn run(&self);
}

impl<T: Fn()> Testable for T {
    fn run(&self) {
        print!("test {} ... ", core::any::type_name::<T>());
        self();
        println!("ok");
    }
}

/// Runs every test, then ends the run as a success. A failing test panics, which ends the
/// run through [`test_panic_handler`] before any later test runs.
pub fn run_tests(tests: &[&dyn Testable]) {
    println!("running {} tests", tests.len());
    for test in tests {
        test.run();
    }
    println!("test result: ok. {} passed", tests.len());
    exit(ExitCode::Success)
}

/// The panic handler of test kernels: the current test failed.
pub fn test_panic_handler(info: &PanicInfo) -> ! {
    println!("FAILED");
    crate::panic::report(info)
}
