//! The two gdb sessions the documents show (docs/debugging.md: the scheduler; docs/userland.md:
//! a user program). `boot docs gdb` runs each session's commands through
//! `scripts/gdb-transcript.py` (gdb in batch mode against `boot gdb --no-launch`, each
//! command echoed after `(gdb) `), keeps the transcript in `docs/data/gdb-*.txt`, and renders
//! it with each step's note after its command and its answer cut as the step says (`...`
//! marks a cut).

/// One step of a session: the command, a note shown after it (`# ...`), and how much of
/// gdb's answer the documents show.
pub struct Step {
    pub command: &'static str,
    pub note: &'static str,
    pub answer: Answer,
}

/// How much of a command's answer is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    All,
    /// The first N lines, then `...` if there were more.
    Head(usize),
    /// The first H lines, `...`, the last T (all of them if there are at most H + T).
    HeadTail(usize, usize),
    /// Each `$N = Type {..}` value with its first N fields, then `...`.
    Fields(usize),
    /// Every line but those starting with this.
    Without(&'static str),
    /// The command, not its answer.
    Silent,
    /// Neither (the `kill` that ends a session).
    Hidden,
}

/// A session: where its transcript is kept, the boot options, whether gdb's lines before
/// the first command (the stop at the kernel's entry) are shown, and the steps.
pub struct Session {
    pub data: &'static str,
    pub options: &'static str,
    pub preamble: bool,
    pub steps: &'static [Step],
}

const fn step(command: &'static str) -> Step {
    Step {
        command,
        note: "",
        answer: Answer::All,
    }
}

const fn noted(command: &'static str, note: &'static str, answer: Answer) -> Step {
    Step {
        command,
        note,
        answer,
    }
}

/// Stepping through the policy while a sleeper and a hog run (docs/debugging.md).
pub const SCHEDULER: Session = Session {
    data: "docs/data/gdb-scheduler.txt",
    options: "run=custom tasks=sleeper:10ms,hog",
    preamble: true,
    steps: &[
        step("hbreak 'sched::fair::class::{impl#2}::tick' if now > 300000000"),
        step("continue"),
        step("cfslab-ps"),
        step("cfslab-rq"),
        noted("cfslab-trace 3", "", Answer::HeadTail(1, 3)),
        step("delete"),
        step("break sched::fair::Fair::charge"),
        step("continue"),
        step("next 2"),
        noted("print *se", "", Answer::Fields(4)),
        step("next 4"),
        noted(
            "print se.vruntime",
            "at nice 0 (weight 1024) vruntime grows by exactly the time run, delta",
            Answer::All,
        ),
        step("print delta"),
        step("delete"),
        step("break 'sched::fair::class::{impl#2}::pick_next'"),
        step("continue"),
        step("next 4"),
        step("step"),
        noted("finish", "", Answer::Without("Run till exit")),
        step("step"),
        noted(
            "step",
            "into CFS's pick: the leftmost, then the buddies (2.6.36)",
            Answer::Head(2),
        ),
        noted(
            "kill",
            "ends QEMU; make gdb ends with status 0",
            Answer::Silent,
        ),
    ],
};

/// A user program's symbols, a stop in its code and one in its system call
/// (docs/userland.md).
pub const HELLO: Session = Session {
    data: "docs/data/gdb-hello.txt",
    options: "-- /bin/hello a",
    preamble: false,
    steps: &[
        step("cfslab-program hello"),
        step("hbreak hello::run"),
        step("continue"),
        step("bt 3"),
        step("hbreak kernel::user::syscall::dispatch"),
        noted(
            "continue",
            "the println's write(2) enters the kernel",
            Answer::All,
        ),
        noted("print/x frame.rax", "the number: 1, write", Answer::All),
        noted("print frame.rdi", "its first argument: fd 1", Answer::All),
        noted(
            "finish",
            "back in the entry path, which returns with sysretq",
            Answer::All,
        ),
        noted("kill", "", Answer::Hidden),
    ],
};

/// Where a note starts on its line.
const NOTE_COLUMN: usize = 33;
const PROMPT: &str = "(gdb) ";
const CUT: &str = "...";

/// Runs `session` through scripts/gdb-transcript.py and returns its transcript.
pub fn generate(session: &Session) -> Result<String, String> {
    let mut args = vec!["scripts/gdb-transcript.py", session.options];
    args.extend(session.steps.iter().map(|s| s.command));
    let text = super::captured("python3", &args)?;
    // Check it renders before keeping it.
    render(session, &text)?;
    Ok(text)
}

pub fn render_scheduler(data: &str) -> Result<String, String> {
    render(&SCHEDULER, data)
}

pub fn render_hello(data: &str) -> Result<String, String> {
    render(&HELLO, data)
}

/// `value` (`$1 = Type {a: 1, b: 2, c: 3}`) with its first `n` fields, then `...`.
fn first_fields(value: &str, n: usize) -> String {
    let (Some(open), Some(close)) = (value.find(" {"), value.rfind('}')) else {
        return value.to_string();
    };
    let inner = &value[open + 2..close];
    let (mut parts, mut depth, mut from) = (Vec::new(), 0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[from..].trim());
    if parts.len() <= n {
        return value.to_string();
    }
    format!("{} {{{}, {CUT}}}", &value[..open], parts[..n].join(", "))
}

fn cut(answer: &[&str], how: Answer) -> Vec<String> {
    let all = || answer.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    match how {
        Answer::All => all(),
        Answer::Head(n) if answer.len() > n => {
            let mut v: Vec<String> = answer[..n].iter().map(|l| l.to_string()).collect();
            v.push(CUT.into());
            v
        }
        Answer::HeadTail(h, t) if answer.len() > h + t => {
            let mut v: Vec<String> = answer[..h].iter().map(|l| l.to_string()).collect();
            v.push(CUT.into());
            v.extend(answer[answer.len() - t..].iter().map(|l| l.to_string()));
            v
        }
        Answer::Head(_) | Answer::HeadTail(..) => all(),
        Answer::Fields(n) => answer
            .iter()
            .map(|l| {
                if l.starts_with('$') {
                    first_fields(l, n)
                } else {
                    l.to_string()
                }
            })
            .collect(),
        Answer::Without(prefix) => answer
            .iter()
            .filter(|l| !l.starts_with(prefix))
            .map(|l| l.to_string())
            .collect(),
        Answer::Silent | Answer::Hidden => Vec::new(),
    }
}

/// The transcript as the documents show it.
pub fn render(session: &Session, data: &str) -> Result<String, String> {
    let mut lines = data.lines().peekable();
    let mut out = String::from("\n```text\n");
    let push = |out: &mut String, line: &str| {
        out.push_str(line);
        out.push('\n');
    };
    let mut preamble = Vec::new();
    while let Some(line) = lines.next_if(|l| !l.starts_with(PROMPT)) {
        preamble.push(line);
    }
    if session.preamble {
        for line in preamble {
            push(&mut out, line);
        }
    }
    for (i, step) in session.steps.iter().enumerate() {
        let command = lines
            .next()
            .and_then(|l| l.strip_prefix(PROMPT))
            .ok_or_else(|| format!("{}: no step {} ({})", session.data, i + 1, step.command))?;
        if command != step.command {
            return Err(format!(
                "{}: step {} is `{command}`, the session's is `{}` (run boot docs gdb)",
                session.data,
                i + 1,
                step.command
            ));
        }
        let mut answer = Vec::new();
        while let Some(line) = lines.next_if(|l| !l.starts_with(PROMPT)) {
            answer.push(line);
        }
        if step.answer == Answer::Hidden {
            continue;
        }
        let shown = if step.note.is_empty() {
            format!("{PROMPT}{command}")
        } else {
            let line = format!("{PROMPT}{command}");
            let pad = NOTE_COLUMN.saturating_sub(line.chars().count()).max(1);
            format!("{line}{}# {}", " ".repeat(pad), step.note)
        };
        push(&mut out, &shown);
        for line in cut(&answer, step.answer) {
            push(&mut out, &line);
        }
    }
    if let Some(extra) = lines.next() {
        return Err(format!(
            "{}: more commands than the session's steps: {extra}",
            session.data
        ));
    }
    out.push_str("```\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: Session = Session {
        data: "test.txt",
        options: "",
        preamble: false,
        steps: &[
            noted("first", "a note", Answer::Head(1)),
            noted("print x", "", Answer::Fields(2)),
            noted("trace", "", Answer::HeadTail(1, 1)),
            noted("finish", "", Answer::Without("Run till")),
            noted("kill", "", Answer::Hidden),
        ],
    };

    #[test]
    fn a_transcript_is_cut_and_noted_as_its_session_says() {
        let data = "entry stop\n(gdb) first\none\ntwo\n(gdb) print x\n$1 = T {a: 1, b: [2, 3], c: 4}\n\
                    (gdb) trace\nh\nx\ny\nz\n(gdb) finish\nRun till exit\n0x1 in f ()\n(gdb) kill\n[killed]\n";
        let want = "\n```text\n(gdb) first                      # a note\none\n...\n(gdb) print x\n\
                    $1 = T {a: 1, b: [2, 3], ...}\n(gdb) trace\nh\n...\nz\n(gdb) finish\n0x1 in f ()\n```\n";
        let shown = render(&SESSION, data).unwrap();
        assert_eq!(shown, want);
        // What it shows renders to itself, cuts and all.
        let again = shown
            .trim_start_matches("\n```text\n")
            .trim_end_matches("```\n")
            .replace("                      # a note", "")
            + "(gdb) kill\n";
        assert_eq!(render(&SESSION, &again).unwrap(), want);
        assert!(
            render(&SESSION, "(gdb) other\n")
                .unwrap_err()
                .contains("`other`")
        );
        assert!(render(&SESSION, &format!("{data}(gdb) more\n")).is_err());
    }
}
