//! An open file or directory of the tree (`open`/`openat` make one): who may read and
//! write it, its offset, and the text a read walks through — made at the first read and
//! kept until a seek back to the start, so that a reader taking a file in small pieces sees
//! one consistent snapshot (Linux's seq_file does the same per read; cfslab per open).

use super::{Device, FileNode, Node, inode_of, lookup};
use crate::sync::{Rank, SpinLock};
use crate::user::errno;
use alloc::string::String;
use alloc::vec::Vec;

/// `open`'s flags that matter here (Linux's values).
pub mod flags {
    pub const O_ACCMODE: u64 = 0o3;
    pub const O_WRONLY: u64 = 0o1;
    pub const O_RDWR: u64 = 0o2;
    pub const O_CREAT: u64 = 0o100;
    pub const O_EXCL: u64 = 0o200;
    pub const O_DIRECTORY: u64 = 0o200_000;
    /// The new descriptor is closed by `execve` (also `dup3`'s and `pipe2`'s flag).
    pub const O_CLOEXEC: u64 = 0o2_000_000;
}

/// An open node.
pub struct NodeFile {
    pub node: Node,
    /// Its path from the root, `..` and `.` resolved: for `openat` relative to it, and its
    /// inode number.
    pub path: String,
    pub readable: bool,
    pub writable: bool,
    state: SpinLock<OpenState>,
}

struct OpenState {
    /// The file's text (a file), or its listing with `.` and `..` first (a directory).
    snapshot: Option<Snapshot>,
    /// Bytes into the text, or entries into the listing.
    offset: u64,
}

enum Snapshot {
    Bytes(Bytes),
    Listing(Vec<(String, u8)>),
}

enum Bytes {
    Static(&'static [u8]),
    Owned(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Owned(b) => b,
        }
    }
}

/// Opens `path` (relative ones from `from`) with `open`'s `flags`, as user `uid`.
pub fn open(path: &[u8], from: &str, flags: u64, uid: u32) -> Result<NodeFile, i64> {
    use flags::*;
    let (node, path) = match lookup(path, from) {
        Ok(_) if flags & (O_CREAT | O_EXCL) == O_CREAT | O_EXCL => return Err(-errno::EEXIST),
        Ok(found) => found,
        // Nothing here can be created: the tree is read-only (the directory must exist).
        Err(e) if e == -errno::ENOENT && flags & O_CREAT != 0 => {
            let parent: &[u8] = match path.iter().rposition(|&b| b == b'/') {
                Some(0) => b"/",
                Some(slash) => &path[..slash],
                None => b".",
            };
            return match lookup(parent, from) {
                Ok((Node::Dir(_), _)) => Err(-errno::EROFS),
                _ => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let access = flags & O_ACCMODE;
    let writable = access == O_WRONLY || access == O_RDWR;
    match (&node, writable) {
        (Node::File(_), _) if flags & O_DIRECTORY != 0 => return Err(-errno::ENOTDIR),
        (Node::Dir(_), true) => return Err(-errno::EISDIR),
        (Node::File(FileNode::Initramfs(_)), true) => return Err(-errno::EROFS),
        (Node::File(FileNode::Proc(_) | FileNode::CpuList(_)), true) => {
            return Err(-errno::EACCES);
        }
        // The console is root's, mode 0600, as Linux's /dev/console.
        (Node::File(FileNode::Device(Device::Console)), _) if uid != 0 => {
            return Err(-errno::EACCES);
        }
        // A knob is root's, mode 0644: only root writes it.
        (Node::File(FileNode::Knob(_)), true) if uid != 0 => return Err(-errno::EACCES),
        _ => {}
    }
    Ok(NodeFile {
        node,
        path,
        readable: access != O_WRONLY,
        writable,
        state: SpinLock::new(
            Rank::OpenFile,
            OpenState {
                snapshot: None,
                offset: 0,
            },
        ),
    })
}

impl crate::user::files::TreeFile for NodeFile {
    fn as_any(&self) -> &dyn core::any::Any {
        self
    }
}

/// A file the table holds as a tree's file is a `NodeFile`: the system calls read it as one.
impl core::ops::Deref for dyn crate::user::files::TreeFile {
    type Target = NodeFile;

    fn deref(&self) -> &NodeFile {
        let file = self.as_any().downcast_ref();
        file.expect("the tree's open files are NodeFiles")
    }
}

impl NodeFile {
    fn with<R>(&self, f: impl FnOnce(&mut OpenState) -> R) -> R {
        f(&mut self.state.lock())
    }

    /// The inode number `stat` and listings show: a hash of the path (FNV-1a), the same for
    /// every open of it.
    pub fn inode(&self) -> u64 {
        inode_of(&self.path)
    }

    fn text(&self) -> Result<Bytes, i64> {
        Ok(match &self.node {
            Node::Dir(_) => return Err(-errno::EISDIR),
            Node::File(FileNode::Initramfs(data)) => Bytes::Static(data),
            Node::File(FileNode::Proc(f)) => Bytes::Owned(f.bytes()?),
            Node::File(FileNode::Knob(k)) => Bytes::Owned(k.text()?.into_bytes()),
            Node::File(FileNode::CpuList(list)) => Bytes::Owned(list.text().into_bytes()),
            // Devices are read and written apart (`read`, `write`).
            Node::File(FileNode::Device(_)) => return Err(-errno::EINVAL),
        })
    }

    /// Reads into `out` from the offset; 0 at the end.
    pub fn read(&self, out: &mut [u8]) -> Result<usize, i64> {
        if !self.readable {
            return Err(-errno::EBADF);
        }
        match self.node {
            Node::Dir(_) => return Err(-errno::EISDIR),
            Node::File(FileNode::Device(Device::Zero)) => {
                out.fill(0);
                return Ok(out.len());
            }
            Node::File(FileNode::Device(_)) => return Ok(0),
            Node::File(_) => {}
        }
        // The text is made outside this file's lock (it takes the scheduler's).
        let fresh = if self.with(|s| s.snapshot.is_none()) {
            Some(self.text()?)
        } else {
            None
        };
        Ok(self.with(|s| {
            if let Some(bytes) = fresh {
                s.snapshot.get_or_insert(Snapshot::Bytes(bytes));
            }
            let Some(Snapshot::Bytes(bytes)) = &s.snapshot else {
                return 0;
            };
            let bytes = bytes.as_slice();
            let from = (s.offset as usize).min(bytes.len());
            let n = out.len().min(bytes.len() - from);
            out[..n].copy_from_slice(&bytes[from..from + n]);
            s.offset += n as u64;
            n
        }))
    }

    /// Writes a knob: the whole of `bytes` is its new value.
    pub fn write(&self, bytes: &[u8]) -> Result<usize, i64> {
        match &self.node {
            _ if !self.writable => Err(-errno::EBADF),
            Node::File(FileNode::Knob(k)) => k.write(bytes).map(|()| bytes.len()),
            Node::File(FileNode::Device(_)) => Ok(bytes.len()),
            _ => Err(-errno::EINVAL),
        }
    }

    /// `lseek`: SEEK_SET, SEEK_CUR or SEEK_END (from the text's end; a directory has none).
    /// Back to 0 the next read makes the text again.
    pub fn seek(&self, offset: i64, whence: u64) -> Result<u64, i64> {
        const SEEK_SET: u64 = 0;
        const SEEK_CUR: u64 = 1;
        const SEEK_END: u64 = 2;
        self.with(|s| {
            let base = match whence {
                SEEK_SET => 0,
                SEEK_CUR => s.offset as i64,
                SEEK_END => match &s.snapshot {
                    Some(Snapshot::Bytes(b)) => b.as_slice().len() as i64,
                    _ => return Err(-errno::EINVAL),
                },
                _ => return Err(-errno::EINVAL),
            };
            let to = base
                .checked_add(offset)
                .filter(|&to| to >= 0)
                .ok_or(-errno::EINVAL)?;
            s.offset = to as u64;
            if to == 0 {
                s.snapshot = None;
            }
            Ok(to as u64)
        })
    }

    /// `getdents64`: as many whole `struct linux_dirent64` records as fit in `room` bytes
    /// from the offset (`.` and `..` first), handed to `copy_out`; EINVAL if not even one
    /// fits. The offset moves past them only if `copy_out` succeeds, as Linux's does: a
    /// listing into a bad buffer (EFAULT) loses no entries. Returns the bytes copied.
    pub fn read_dir(
        &self,
        room: usize,
        copy_out: impl FnOnce(&[u8]) -> Result<(), i64>,
    ) -> Result<usize, i64> {
        let Node::Dir(dir) = &self.node else {
            return Err(-errno::ENOTDIR);
        };
        let fresh = self.with(|s| s.snapshot.is_none()).then(|| {
            let mut listing = alloc::vec![(String::from("."), 4), (String::from(".."), 4)];
            listing.extend(
                dir.entries()
                    .into_iter()
                    .map(|(n, node)| (n, node.dirent_type())),
            );
            listing
        });
        self.with(|s| {
            if let Some(listing) = fresh {
                s.snapshot.get_or_insert(Snapshot::Listing(listing));
            }
            let Some(Snapshot::Listing(listing)) = &s.snapshot else {
                return Ok(0);
            };
            let mut out = Vec::new();
            let mut next = s.offset;
            for (name, kind) in listing.iter().skip(s.offset as usize) {
                // u64 inode, i64 offset of the next, u16 length, u8 type, the name with its
                // NUL, padded to 8 bytes.
                let len = (19 + name.len() + 1).next_multiple_of(8);
                if out.len() + len > room {
                    break;
                }
                next += 1;
                let inode = inode_of(&alloc::format!("{}/{name}", self.path));
                out.extend_from_slice(&inode.to_le_bytes());
                out.extend_from_slice(&(next as i64).to_le_bytes());
                out.extend_from_slice(&(len as u16).to_le_bytes());
                out.push(*kind);
                out.extend_from_slice(name.as_bytes());
                out.resize(out.len() + len - 19 - name.len(), 0);
            }
            if out.is_empty() && (s.offset as usize) < listing.len() {
                return Err(-errno::EINVAL);
            }
            copy_out(&out)?;
            s.offset = next;
            Ok(out.len())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::flags::*;
    use super::open;
    use crate::user::errno;

    /// Nothing can be created (EROFS where the directory exists, ENOENT where it does not),
    /// a directory is not written (EISDIR), and O_EXCL refuses what exists — Linux's answers.
    #[test_case]
    fn open_refuses_as_a_read_only_tree_does() {
        let err = |path: &[u8], from, flags| open(path, from, flags, 0).err();
        assert_eq!(err(b"/x", "/", O_WRONLY | O_CREAT), Some(-errno::EROFS));
        assert_eq!(
            err(b"kernel/y", "/sys", O_WRONLY | O_CREAT),
            Some(-errno::EROFS)
        );
        assert_eq!(err(b"/no/x", "/", O_WRONLY | O_CREAT), Some(-errno::ENOENT));
        assert_eq!(err(b"/sys", "/", O_WRONLY), Some(-errno::EISDIR));
        assert_eq!(err(b"/sys", "/", O_CREAT | O_EXCL), Some(-errno::EEXIST));
        assert_eq!(err(b"/sys", "/", O_DIRECTORY), None);
    }
}
