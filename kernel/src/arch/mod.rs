//! Hardware lives here and only here. cfslab runs on one architecture, x86_64 under QEMU;
//! everything outside `arch/` talks to the machine through the functions re-exported below.

pub mod x86_64;
