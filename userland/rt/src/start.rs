//! Where a program starts. The kernel (Linux's `create_elf_tables`, or cfslab's loader)
//! leaves the initial stack as the SysV x86_64 ABI lays it out: at `rsp`, argc; then argc
//! pointers to the arguments and a null; the environment's pointers and a null; then the
//! auxiliary vector, (type, value) pairs ending with AT_NULL.

use core::ffi::CStr;
use core::sync::atomic::{AtomicPtr, Ordering};

/// The environment's array, kept by [`start`] so that [`env`] can be read anywhere.
static ENVIRONMENT: AtomicPtr<*const u8> = AtomicPtr::new(core::ptr::null_mut());

/// The environment as the kernel passed it: a null-terminated array of `NAME=value`
/// strings, to hand on to `execve` (C's `environ`).
pub fn environ() -> *const *const u8 {
    ENVIRONMENT.load(Ordering::Relaxed).cast_const()
}

/// The value of environment variable `name` (`NAME=value`), if it is set and is UTF-8.
pub fn env(name: &str) -> Option<&'static str> {
    let mut p = ENVIRONMENT.load(Ordering::Relaxed).cast_const();
    if p.is_null() {
        return None;
    }
    loop {
        // SAFETY: the environment array ends with a null pointer; each entry is a
        // NUL-terminated string the kernel put on the initial stack, there for good.
        let entry = unsafe { *p };
        if entry.is_null() {
            return None;
        }
        // SAFETY: as above.
        let bytes = unsafe { CStr::from_ptr(entry.cast()) }.to_bytes();
        if let Some(value) = bytes
            .strip_prefix(name.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
        {
            return core::str::from_utf8(value).ok();
        }
        // SAFETY: not yet at the null that ends the array.
        p = unsafe { p.add(1) };
    }
}

/// The program's arguments, environment and auxiliary vector.
pub struct Args {
    argc: usize,
    argv: *const *const u8,
    envp: *const *const u8,
    auxv: *const usize,
}

impl Args {
    /// The number of arguments, the program's name included.
    pub fn len(&self) -> usize {
        self.argc
    }

    /// Whether there are no arguments at all (not even the name: a bare `execve`).
    pub fn is_empty(&self) -> bool {
        self.argc == 0
    }

    /// Argument `i` (0 is the program's name) as bytes.
    pub fn get(&self, i: usize) -> Option<&'static [u8]> {
        // SAFETY: the kernel put argc valid, NUL-terminated strings here; `i < argc`.
        (i < self.argc).then(|| unsafe { CStr::from_ptr((*self.argv.add(i)).cast()).to_bytes() })
    }

    /// Argument `i` as text (`"?"` if it is not UTF-8).
    pub fn str(&self, i: usize) -> Option<&'static str> {
        self.get(i).map(|b| core::str::from_utf8(b).unwrap_or("?"))
    }

    /// The raw argv and envp arrays, to hand on to `execve`.
    pub fn raw(&self) -> (*const *const u8, *const *const u8) {
        (self.argv, self.envp)
    }

    /// The number of environment strings.
    pub fn env_len(&self) -> usize {
        let mut n = 0;
        // SAFETY: the environment array ends with a null pointer.
        while !unsafe { *self.envp.add(n) }.is_null() {
            n += 1;
        }
        n
    }

    /// The value of auxiliary-vector entry `kind` (AT_PAGESZ = 6, AT_ENTRY = 9, ...).
    pub fn aux(&self, kind: usize) -> Option<usize> {
        let mut p = self.auxv;
        loop {
            // SAFETY: the vector is (type, value) pairs ending with type AT_NULL (0).
            let (t, v) = unsafe { (*p, *p.add(1)) };
            if t == 0 {
                return None;
            }
            if t == kind {
                return Some(v);
            }
            // SAFETY: not yet at AT_NULL, so the next pair exists.
            p = unsafe { p.add(2) };
        }
    }
}

/// The entry point: the stack pointer is where argc is; the stack is re-aligned to 16
/// bytes for the call (the ABI guarantees it at `_start`, but this costs nothing).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _start() -> ! {
    core::arch::naked_asm!(
        "xor ebp, ebp",
        "mov rdi, rsp",
        "and rsp, -16",
        "call {start}",
        "ud2",
        start = sym start,
    )
}

unsafe extern "Rust" {
    /// The program's `main`, declared with [`crate::main!`].
    fn __rt_main(args: &Args) -> i32;
}

extern "C" fn start(sp: *const usize) -> ! {
    // SAFETY: `sp` points at the initial stack the kernel built (see the module's docs).
    let args = unsafe {
        let argc = *sp;
        let argv = sp.add(1).cast::<*const u8>();
        let envp = argv.add(argc + 1);
        let mut end = envp;
        while !(*end).is_null() {
            end = end.add(1);
        }
        Args {
            argc,
            argv,
            envp,
            auxv: end.add(1).cast(),
        }
    };
    ENVIRONMENT.store(args.envp.cast_mut(), Ordering::Relaxed);
    // SAFETY: every program defines `__rt_main` through `rt::main!`.
    let status = unsafe { __rt_main(&args) };
    crate::process::exit(status)
}
