//! `cpu_attach_domain`'s pruning (kernel/sched.c, 2.6.24; the same rules in 6.6's
//! kernel/sched/topology.c): a level that adds nothing to the one below is dropped.

use super::{Domain, Flags};
use alloc::vec::Vec;

/// The flags that only mean something with more than one group.
const NEEDS_GROUPS: u32 = Flags::LOAD_BALANCE
    | Flags::BALANCE_NEWIDLE
    | Flags::BALANCE_FORK
    | Flags::BALANCE_EXEC
    | Flags::SHARE_CPUPOWER
    | Flags::SHARE_PKG_RESOURCES;

/// `sd_degenerate`: a domain of one CPU, or of one group without a wake-up flag.
fn degenerate(d: &Domain) -> bool {
    if d.span.len() == 1 {
        return true;
    }
    let flags = d.params.flags;
    if flags.has(NEEDS_GROUPS) && d.groups.len() > 1 {
        return false;
    }
    !flags.has(Flags::WAKE_IDLE | Flags::WAKE_AFFINE | Flags::WAKE_BALANCE)
}

/// `sd_parent_degenerate`: `parent` adds nothing to `child` — it is degenerate itself, or
/// spans the same CPUs with no flag the child lacks (with one group, the group flags do
/// not count; WAKE_BALANCE does not beside the child's WAKE_AFFINE).
fn parent_degenerate(child: &Domain, parent: &Domain) -> bool {
    if degenerate(parent) {
        return true;
    }
    if child.span != parent.span {
        return false;
    }
    let mut pflags = parent.params.flags.0;
    let cflags = child.params.flags.0;
    if parent.groups.len() == 1 {
        pflags &= !NEEDS_GROUPS;
    }
    if cflags & Flags::WAKE_AFFINE != 0 {
        pflags &= !Flags::WAKE_BALANCE;
    }
    !cflags & pflags == 0
}

/// `cpu_attach_domain`'s pruning: each parent that adds nothing is dropped, then the
/// bottom domain if it is degenerate.
pub(super) fn attach(mut domains: Vec<Domain>) -> Vec<Domain> {
    let mut i = 0;
    while i + 1 < domains.len() {
        if parent_degenerate(&domains[i], &domains[i + 1]) {
            domains.remove(i + 1);
        } else {
            i += 1;
        }
    }
    if domains.first().is_some_and(degenerate) {
        domains.remove(0);
    }
    domains
}
