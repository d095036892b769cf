//! A process's real-time interval timer, ITIMER_REAL (Linux's `signal_struct.real_timer`
//! and `it_real_fn`, kernel/time/itimer.c): `alarm` and `setitimer` arm it, and when it
//! expires the process gets SIGALRM, and the timer is armed again one interval later if
//! it has one (`signal::alarm_expired`). It is the process's, so it survives `execve` and is
//! not inherited by a fork; it goes with the process (`SigHand`'s drop cancels it).

use crate::task::TaskId;
use crate::time::hrtimer::{self, Action, TimerId};

/// The timer's state: when it next expires and its interval, 0 for none.
#[derive(Debug, Default)]
pub struct RealTimer {
    timer: Option<TimerId>,
    expiry: u64,
    interval: u64,
}

impl RealTimer {
    /// What is left until it expires (0: not armed) and its interval, at `now`.
    pub fn get(&self, now: u64) -> (u64, u64) {
        let left = if self.timer.is_some() {
            self.expiry.saturating_sub(now).max(1)
        } else {
            0
        };
        (left, self.interval)
    }

    /// Arms it to expire `value` ns after `now` (0: disarms it), then every `interval` ns;
    /// `leader` leads the process SIGALRM goes to. Returns what [`get`](Self::get) said.
    pub fn set(&mut self, now: u64, value: u64, interval: u64, leader: TaskId) -> (u64, u64) {
        let old = self.get(now);
        self.cancel();
        self.interval = interval;
        if value != 0 {
            self.expiry = now.saturating_add(value);
            self.timer = Some(hrtimer::start(self.expiry, Action::Alarm(leader)));
        }
        old
    }

    /// The timer has expired (its hrtimer fired): armed again if it has an interval.
    pub fn expired(&mut self, now: u64, leader: TaskId) {
        self.timer = None;
        if self.interval != 0 {
            // The next expiry one interval after this one, not after `now`: no drift.
            self.expiry = self.expiry.saturating_add(self.interval).max(now);
            self.timer = Some(hrtimer::start(self.expiry, Action::Alarm(leader)));
        }
    }

    /// Disarms it.
    pub fn cancel(&mut self) {
        if let Some(timer) = self.timer.take() {
            hrtimer::cancel(timer);
        }
    }
}
