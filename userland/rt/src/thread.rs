//! Threads: `clone` with a stack of the caller's, sharing the address space, files and
//! signal handlers (CLONE_THREAD), joined through the futex the kernel clears at the
//! thread's end (CLONE_CHILD_CLEARTID), as musl's `pthread_create` and `pthread_join` do.

use crate::Errno;
use crate::sys::{nr, syscall6};
use core::sync::atomic::{AtomicU32, Ordering};

const CLONE_VM: usize = 0x100;
const CLONE_FS: usize = 0x200;
const CLONE_FILES: usize = 0x400;
const CLONE_SIGHAND: usize = 0x800;
const CLONE_THREAD: usize = 0x1_0000;
const CLONE_PARENT_SETTID: usize = 0x10_0000;
const CLONE_CHILD_CLEARTID: usize = 0x20_0000;

/// A running thread of this process: [`Thread::join`] waits for its end.
pub struct Thread {
    tid: i32,
    /// Holds the tid while the thread lives; the kernel clears it and wakes a futex waiter
    /// when the thread ends (CLONE_CHILD_CLEARTID), as `pthread_join` relies on.
    word: *const AtomicU32,
}

impl Thread {
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// Whether the thread has ended (the kernel has cleared its tid word): then [`join`]
    /// returns at once. For a caller that must never wait on a thread.
    ///
    /// [`join`]: Thread::join
    pub fn has_ended(&self) -> bool {
        // SAFETY: as in `join`: the word lives until the thread has ended and been joined.
        unsafe { &*self.word }.load(Ordering::Acquire) == 0
    }

    /// Waits until the thread has ended.
    pub fn join(self) {
        // SAFETY: the word is at the top of the stack the caller of `spawn_thread` keeps
        // alive until the thread has ended, which is what this waits for.
        let word = unsafe { &*self.word };
        loop {
            let tid = word.load(Ordering::Acquire);
            if tid == 0 {
                return;
            }
            futex_wait(word, tid);
        }
    }
}

/// `futex(word, FUTEX_WAIT, expected)`: sleeps while `word` holds `expected` (returns at
/// once if it does not; may return early, so callers re-check).
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    const FUTEX_WAIT: usize = 0;
    // SAFETY: the kernel only reads the word.
    let _ = unsafe {
        syscall6(
            nr::FUTEX,
            [
                word.as_ptr() as usize,
                FUTEX_WAIT,
                expected as usize,
                0,
                0,
                0,
            ],
        )
    };
}

/// `futex(word, FUTEX_WAKE, count)`: wakes up to `count` sleepers on `word`.
pub fn futex_wake(word: &AtomicU32, count: u32) {
    const FUTEX_WAKE: usize = 1;
    // SAFETY: no memory is touched.
    let _ = unsafe {
        syscall6(
            nr::FUTEX,
            [word.as_ptr() as usize, FUTEX_WAKE, count as usize, 0, 0, 0],
        )
    };
}

/// Starts a thread — a task of this process (CLONE_THREAD), sharing its memory, files and
/// signal actions — running `f(arg)` on `stack`, then ending (that thread only). The top
/// 16 bytes of `stack` hold the thread's tid word; [`Thread::join`] waits for its end.
///
/// # Safety
/// `stack` must stay alive and unused by anyone else until the thread has ended.
pub unsafe fn spawn_thread(
    stack: &mut [u8],
    f: extern "C" fn(usize),
    arg: usize,
) -> Result<Thread, Errno> {
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    let word = (top - 16) as *const AtomicU32;
    let flags = CLONE_VM
        | CLONE_FS
        | CLONE_FILES
        | CLONE_SIGHAND
        | CLONE_THREAD
        | CLONE_PARENT_SETTID
        | CLONE_CHILD_CLEARTID;
    // SAFETY: the caller vouches for the stack; see `clone_raw`. The word is in it, aligned.
    let tid = Errno::result(unsafe { clone_raw(flags, top - 16, f, arg, word as usize) })?;
    Ok(Thread {
        tid: tid as i32,
        word,
    })
}

/// `clone` for a thread whose child side runs `f(arg)` on its own stack and then ends.
///
/// # Safety
/// `stack_top` is the 16-byte-aligned top of a stack no one else uses until the thread has
/// ended; `tid_word` is a 4-byte word the kernel may write until then (it clears it at the
/// thread's end).
#[unsafe(naked)]
unsafe extern "C" fn clone_raw(
    flags: usize,
    stack_top: usize,
    f: extern "C" fn(usize),
    arg: usize,
    tid_word: usize,
) -> isize {
    core::arch::naked_asm!(
        // The child finds f and arg on its new stack.
        "sub rsi, 16",
        "mov [rsi], rcx",
        "mov [rsi + 8], rdx",
        // clone(flags, newsp, parent_tid = tid_word, child_tid = tid_word, tls = 0)
        "mov rdx, r8",
        "mov r10, r8",
        "xor r8d, r8d",
        "mov eax, {clone}",
        "syscall",
        "test rax, rax",
        "jnz 2f",
        // The child, on its own stack: f(arg), then exit(0) (this thread only).
        "xor ebp, ebp",
        "pop rdi",
        "pop rax",
        "call rax",
        "xor edi, edi",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "2:",
        "ret",
        clone = const nr::CLONE,
        exit = const nr::EXIT,
    )
}
