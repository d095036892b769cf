//! A process's open files: the console (fds 0, 1, 2 at start), pipes, and the files of the
//! tree (`user::fs`). The table is
//! shared by threads (`clone` with CLONE_FILES) and copied by `fork`, as Linux's
//! `files_struct`; an end of a pipe is counted while any table holds it, so a reader sees
//! end-of-file once every write end is closed, and a writer EPIPE once every read end is.

use crate::sched::WaitQueue;
use crate::sync::{Rank, SpinLock};
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// How many bytes a pipe holds (Linux's minimum pipe size is a page).
pub const PIPE_BYTES: usize = 4096;
/// How many files a process may have open (Linux's default RLIMIT_NOFILE).
pub const MAX_FDS: usize = 1024;

/// How many pipes may exist at once, in all processes together: each may hold
/// [`PIPE_BYTES`] of kernel heap, so this bounds what pipes can take (4 MiB) far below the
/// heap's size. One more gives ENFILE, as Linux's pipe-user-pages limits do.
pub const MAX_PIPES: usize = 1024;

/// Pipes that exist now.
static PIPES: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// A pipe: a byte queue and who waits on it.
pub struct Pipe {
    state: SpinLock<PipeState>,
    readable: WaitQueue,
    writable: WaitQueue,
}

struct PipeState {
    bytes: VecDeque<u8>,
    readers: usize,
    writers: usize,
}

impl Pipe {
    /// Whether a read (`write` false) or a write at this end would wait now, as `poll` asks.
    pub fn readiness(&self, write: bool) -> Readiness {
        self.with(|s| {
            if write {
                Readiness {
                    writable: s.bytes.len() < PIPE_BYTES,
                    error: s.readers == 0,
                    ..Readiness::default()
                }
            } else {
                Readiness {
                    readable: !s.bytes.is_empty(),
                    hangup: s.writers == 0,
                    ..Readiness::default()
                }
            }
        })
    }

    /// The queue a task waiting at this end sleeps on.
    pub fn wait_queue(&self, write: bool) -> &WaitQueue {
        if write {
            &self.writable
        } else {
            &self.readable
        }
    }

    /// A pipe and its two ends: (read, write); `None` if [`MAX_PIPES`] exist already.
    pub fn open() -> Option<(File, File)> {
        use core::sync::atomic::Ordering::Relaxed;
        PIPES
            .try_update(Relaxed, Relaxed, |n| (n < MAX_PIPES).then_some(n + 1))
            .ok()?;
        let pipe = Arc::new(Pipe {
            state: SpinLock::new(
                Rank::Pipe,
                PipeState {
                    bytes: VecDeque::new(),
                    readers: 0,
                    writers: 0,
                },
            ),
            readable: WaitQueue::new(),
            writable: WaitQueue::new(),
        });
        Some((
            File::pipe_end(pipe.clone(), false),
            File::pipe_end(pipe, true),
        ))
    }

    fn with<R>(&self, f: impl FnOnce(&mut PipeState) -> R) -> R {
        f(&mut self.state.lock())
    }

    /// Reads into `out` (up to its length): waits while the pipe is empty and has writers;
    /// empty with no writers is end-of-file (0 bytes). `None` if `interrupted()` ended the
    /// wait with nothing to read.
    pub fn read(&self, out: &mut [u8], interrupted: impl Fn() -> bool) -> Option<usize> {
        self.readable
            .wait_until(|| interrupted() || self.with(|s| !s.bytes.is_empty() || s.writers == 0));
        let n = self.with(|s| {
            if s.bytes.is_empty() && s.writers > 0 {
                return None;
            }
            let n = out.len().min(s.bytes.len());
            for (to, from) in out.iter_mut().zip(s.bytes.drain(..n)) {
                *to = from;
            }
            Some(n)
        })?;
        self.writable.wake_all_sync();
        Some(n)
    }

    /// Writes some of `bytes`: waits while the pipe is full and has readers. `None` if there
    /// are no readers (EPIPE).
    pub fn write(&self, bytes: &[u8], interrupted: impl Fn() -> bool) -> Option<usize> {
        self.writable.wait_until(|| {
            interrupted() || self.with(|s| s.bytes.len() < PIPE_BYTES || s.readers == 0)
        });
        let written = self.with(|s| {
            if s.readers == 0 {
                return None;
            }
            let n = bytes.len().min(PIPE_BYTES - s.bytes.len());
            s.bytes.extend(&bytes[..n]);
            Some(n)
        });
        self.readable.wake_all_sync();
        written
    }
}

/// What `poll` and `select` ask of a file, as Linux's `pipe_poll` answers: is there
/// something to read, room to write, and has the other end gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    /// Bytes to read (POLLIN).
    pub readable: bool,
    /// Room to write (POLLOUT).
    pub writable: bool,
    /// A pipe's read end whose every write end is closed (POLLHUP).
    pub hangup: bool,
    /// A pipe's write end whose every read end is closed (POLLERR).
    pub error: bool,
}

impl Drop for Pipe {
    fn drop(&mut self) {
        PIPES.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
    }
}

/// An open file.
pub enum File {
    Console,
    Pipe {
        pipe: Arc<Pipe>,
        write: bool,
    },
    /// A file or directory of the tree (`user::fs`): the initramfs, /proc, /sys.
    Node(Box<dyn TreeFile>),
}

/// An open file of the tree (`user::fs::open_file::NodeFile`, the one kind there is), as
/// the table holds it: by what it is, not by its type. The table sits below the tree — the
/// tree holds `/proc`, which reads the scheduler, which holds every task's table — so the
/// table does not name the tree's types (as Linux's `struct file` reaches its filesystem
/// through `f_op` and `private_data`); `open_file` lends the `NodeFile` back to the system
/// calls (its `Deref` for `dyn TreeFile`).
pub trait TreeFile: Send + Sync {
    /// The file as what it is, for the tree to recognise its own.
    fn as_any(&self) -> &dyn core::any::Any;
}

impl File {
    fn pipe_end(pipe: Arc<Pipe>, write: bool) -> File {
        pipe.with(|s| {
            if write {
                s.writers += 1
            } else {
                s.readers += 1
            }
        });
        File::Pipe { pipe, write }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if let File::Pipe { pipe, write } = self {
            pipe.with(|s| {
                if *write {
                    s.writers -= 1
                } else {
                    s.readers -= 1
                }
            });
            // A reader waiting for bytes may now see end-of-file, a writer EPIPE.
            pipe.readable.wake_all();
            pipe.writable.wake_all();
        }
    }
}

/// One close-on-exec bit per descriptor, in place: a fork copies it without allocating.
#[derive(Clone, Copy, Default)]
struct CloseOnExec([u64; MAX_FDS / 64]);

impl CloseOnExec {
    fn get(&self, fd: usize) -> bool {
        self.0[fd / 64] & (1 << (fd % 64)) != 0
    }

    fn set(&mut self, fd: usize, on: bool) {
        let (word, bit) = (fd / 64, 1u64 << (fd % 64));
        if on {
            self.0[word] |= bit;
        } else {
            self.0[word] &= !bit;
        }
    }
}

/// A file-descriptor table: each descriptor's open file, and its close-on-exec flag
/// (FD_CLOEXEC: the descriptor's own, not the file's, as in Linux's `fdtable`). It also
/// holds the working directory, where relative paths start: Linux keeps that in the
/// `fs_struct` beside it (shared by CLONE_FS as the table is by CLONE_FILES); cfslab's
/// threads share both, and a fork copies both.
pub struct FdTable {
    fds: Vec<Option<Arc<File>>>,
    close_on_exec: CloseOnExec,
    cwd: Arc<str>,
    /// RLIMIT_NOFILE, soft and hard: descriptors from the soft limit up cannot be made.
    /// Linux keeps it with the process's other limits; it limits only this table.
    limit: FdLimit,
}

/// RLIMIT_NOFILE: the soft limit (the first descriptor that cannot be made) and the hard
/// one (how far an unprivileged process may raise the soft one), both at most [`MAX_FDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    pub soft: usize,
    pub hard: usize,
}

/// A table and its lock, as the tasks that share it hold it.
pub type FileTable = SpinLock<FdTable>;

/// A table shared by the tasks that share it.
pub type Files = Arc<FileTable>;

impl FdTable {
    /// stdin, stdout and stderr on the console.
    pub fn with_console() -> Files {
        let console = Arc::new(File::Console);
        Arc::new(SpinLock::new(
            Rank::FdTable,
            FdTable {
                fds: alloc::vec![Some(console.clone()), Some(console.clone()), Some(console)],
                close_on_exec: CloseOnExec::default(),
                cwd: Arc::from("/"),
                limit: FdLimit {
                    soft: MAX_FDS,
                    hard: MAX_FDS,
                },
            },
        ))
    }

    /// A copy for a forked child: the same open files.
    pub fn fork(&self) -> Files {
        Arc::new(SpinLock::new(
            Rank::FdTable,
            FdTable {
                fds: self.fds.clone(),
                close_on_exec: self.close_on_exec,
                cwd: self.cwd.clone(),
                limit: self.limit,
            },
        ))
    }

    pub fn get(&self, fd: i64) -> Option<Arc<File>> {
        usize::try_from(fd)
            .ok()
            .and_then(|i| self.fds.get(i)?.clone())
    }

    /// Installs `file` at the lowest free descriptor; `None` if the table is full.
    pub fn install(&mut self, file: Arc<File>) -> Option<usize> {
        self.install_from(0, file, false)
    }

    /// Installs `file` at the lowest free descriptor from `min` on (`fcntl`'s F_DUPFD),
    /// with its close-on-exec flag; `None` if there is none below the limit (EMFILE).
    pub fn install_from(
        &mut self,
        min: usize,
        file: Arc<File>,
        close_on_exec: bool,
    ) -> Option<usize> {
        let free = (min..self.fds.len()).find(|&fd| self.fds[fd].is_none());
        let fd = match free {
            Some(fd) => fd,
            None => self.fds.len().max(min),
        };
        if fd >= self.limit.soft {
            return None;
        }
        self.install_at(fd, file)?;
        self.close_on_exec.set(fd, close_on_exec);
        Some(fd)
    }

    /// Puts `file` at `fd` (dup2), close-on-exec off: what was there, `None` in the outer
    /// option if `fd` is beyond the limit (EBADF).
    pub fn install_at(&mut self, fd: usize, file: Arc<File>) -> Option<Option<Arc<File>>> {
        if fd >= self.limit.soft {
            return None;
        }
        if self.fds.len() <= fd {
            self.fds.resize(fd + 1, None);
        }
        self.close_on_exec.set(fd, false);
        Some(self.fds[fd].replace(file))
    }

    /// RLIMIT_NOFILE.
    pub fn limit(&self) -> FdLimit {
        self.limit
    }

    /// Sets RLIMIT_NOFILE (the caller checked it against the rules).
    pub fn set_limit(&mut self, limit: FdLimit) {
        self.limit = limit;
    }

    /// The working directory (canonical, from the root).
    pub fn cwd(&self) -> Arc<str> {
        self.cwd.clone()
    }

    pub fn set_cwd(&mut self, cwd: Arc<str>) {
        self.cwd = cwd;
    }

    /// `fd`'s close-on-exec flag, `None` if `fd` is not open.
    pub fn close_on_exec(&self, fd: usize) -> Option<bool> {
        self.fds.get(fd)?.as_ref()?;
        Some(self.close_on_exec.get(fd))
    }

    /// Sets `fd`'s close-on-exec flag; `None` if `fd` is not open.
    pub fn set_close_on_exec(&mut self, fd: usize, on: bool) -> Option<()> {
        self.fds.get(fd)?.as_ref()?;
        self.close_on_exec.set(fd, on);
        Some(())
    }

    /// Closes every descriptor marked close-on-exec (`execve`) and returns their files, for
    /// the caller to drop after the table's lock.
    pub fn take_close_on_exec(&mut self) -> Vec<Arc<File>> {
        let marked = (0..self.fds.len()).filter(|&fd| self.close_on_exec.get(fd));
        let marked: Vec<usize> = marked.collect();
        marked
            .into_iter()
            .filter_map(|fd| {
                self.close_on_exec.set(fd, false);
                self.fds[fd].take()
            })
            .collect()
    }

    /// Closes `fd`: the file it held, `None` if it was not open.
    pub fn close(&mut self, fd: i64) -> Option<Arc<File>> {
        usize::try_from(fd)
            .ok()
            .and_then(|i| self.fds.get_mut(i)?.take())
    }
}
