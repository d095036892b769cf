//! Background jobs: what `cmd &` started, numbered as a POSIX shell numbers them (`[1]`),
//! reported when they end (at the next prompt, as `[1] Done  hog`), listed by `jobs` and
//! waited for by `wait` and `fg`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use rt::process::{self, Exit};

/// One background job: one process.
pub struct Job {
    pub number: usize,
    pub pid: i32,
    pub command: String,
}

/// The shell's background jobs.
#[derive(Default)]
pub struct Jobs {
    running: Vec<Job>,
}

/// How a process ended, in words: `Done`, `Exit 3`, `Killed (signal 9)`.
pub fn describe(exit: Exit) -> String {
    match exit {
        Exit::Exited(0) => "Done".into(),
        Exit::Exited(status) => format!("Exit {status}"),
        Exit::Killed(signal) => format!("Killed (signal {signal})"),
    }
}

impl Jobs {
    /// Records a job started in the background and says its number and pid.
    pub fn add(&mut self, pid: i32, command: String) {
        let number = self.running.iter().map(|j| j.number).max().unwrap_or(0) + 1;
        rt::println!("[{number}] {pid}");
        self.running.push(Job {
            number,
            pid,
            command,
        });
    }

    /// Reports (and forgets) the jobs that have ended.
    pub fn reap_ended(&mut self) {
        let mut i = 0;
        while i < self.running.len() {
            match process::wait_nohang(self.running[i].pid) {
                Ok(None) => i += 1,
                Ok(Some(exit)) => {
                    let job = self.running.remove(i);
                    rt::println!("[{}] {}  {}", job.number, describe(exit), job.command);
                }
                // Not our child any more (reaped elsewhere): forget it.
                Err(_) => {
                    self.running.remove(i);
                }
            }
        }
    }

    /// `jobs`: one line per running job.
    pub fn list(&self) -> String {
        let mut text = String::new();
        for job in &self.running {
            text += &format!("[{}] Running  {}  {}\n", job.number, job.pid, job.command);
        }
        text
    }

    /// The pid `spec` names: `%N` (job N), or a pid.
    pub fn pid_of(&self, spec: &str) -> Result<i32, String> {
        if let Some(number) = spec.strip_prefix('%') {
            let number: usize = number
                .parse()
                .map_err(|_| format!("{spec}: not a job number"))?;
            return self
                .running
                .iter()
                .find(|j| j.number == number)
                .map(|j| j.pid)
                .ok_or_else(|| format!("{spec}: no such job"));
        }
        spec.parse()
            .map_err(|_| format!("'{spec}' is not a pid or %job"))
    }

    /// Takes job `pid` out of the table (`fg`: it is waited for in the foreground).
    pub fn take(&mut self, pid: i32) -> Option<Job> {
        let i = self.running.iter().position(|j| j.pid == pid)?;
        Some(self.running.remove(i))
    }

    /// The most recent job's pid (`fg` with no argument).
    pub fn latest(&self) -> Option<i32> {
        self.running.last().map(|j| j.pid)
    }

    /// Waits for job `pid` (every job, with `None`) and reports each end.
    pub fn wait(&mut self, pid: Option<i32>) -> Result<(), String> {
        let targets: Vec<i32> = match pid {
            Some(pid) if self.running.iter().any(|j| j.pid == pid) => alloc::vec![pid],
            Some(pid) => return Err(format!("{pid}: not a job of this shell")),
            None => self.running.iter().map(|j| j.pid).collect(),
        };
        for pid in targets {
            let ended = process::wait(pid);
            if let Some(i) = self.running.iter().position(|j| j.pid == pid) {
                let job = self.running.remove(i);
                if let Ok((_, exit)) = ended {
                    rt::println!("[{}] {}  {}", job.number, describe(exit), job.command);
                }
            }
        }
        Ok(())
    }
}
