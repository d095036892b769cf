//! Linux's error numbers used here (include/uapi/asm-generic/errno-base.h and errno.h): what a system
//! call returns, negated, when it fails. A leaf, so that the files, the file tree and the
//! terminal can fail as Linux does without depending on the system-call table.

pub const EPERM: i64 = 1;
pub const ENOENT: i64 = 2;
pub const ESRCH: i64 = 3;
pub const EINTR: i64 = 4;
pub const EIO: i64 = 5;
pub const E2BIG: i64 = 7;
pub const ENOEXEC: i64 = 8;
pub const EBADF: i64 = 9;
pub const ECHILD: i64 = 10;
pub const EAGAIN: i64 = 11;
pub const ENOMEM: i64 = 12;
pub const EACCES: i64 = 13;
pub const EFAULT: i64 = 14;
pub const EBUSY: i64 = 16;
pub const EEXIST: i64 = 17;
pub const ENODEV: i64 = 19;
pub const ENOTDIR: i64 = 20;
pub const EISDIR: i64 = 21;
pub const EINVAL: i64 = 22;
pub const ENFILE: i64 = 23;
pub const EMFILE: i64 = 24;
pub const ENOTTY: i64 = 25;
pub const ESPIPE: i64 = 29;
pub const EROFS: i64 = 30;
pub const EPIPE: i64 = 32;
pub const ERANGE: i64 = 34;
pub const ENAMETOOLONG: i64 = 36;
pub const ENOSYS: i64 = 38;
pub const ETIMEDOUT: i64 = 110;

/// What an interrupted system call returns inside the kernel; none reaches a program (Linux's
/// `include/linux/errno.h`). The way back to ring 3 (`user::signal`) turns each into a
/// restart of the call or EINTR: ERESTARTSYS restarts unless a handler without `SA_RESTART`
/// ran, ERESTARTNOHAND restarts unless any handler ran, ERESTARTNOINTR always restarts.
pub const ERESTARTSYS: i64 = 512;
pub const ERESTARTNOINTR: i64 = 513;
pub const ERESTARTNOHAND: i64 = 514;
