//! The custom workload's task specs (`tasks=`): what they default to, and what they refuse.

use super::*;

#[test]
fn custom_task_specs_parse_with_their_defaults() {
    use crate::tasks::{TaskKind, TaskSpec};
    let c = Config::parse("run=custom tasks=sleeper:50ms@1,hog@2*2,waker,makej:4%-5").unwrap();
    let io = Config::parse("run=custom tasks=makej:3/io").unwrap();
    assert!(io.tasks[0].io && io.tasks[0].arg == 3);
    assert!(io.to_string().contains("tasks=makej:3/io@1 "));
    assert_eq!(
        c.tasks,
        [
            TaskSpec {
                kind: TaskKind::Sleeper,
                arg: 50_000_000,
                uid: 1,
                count: 1,
                nice: 0,
                io: false
            },
            TaskSpec {
                kind: TaskKind::Hog,
                arg: 0,
                uid: 2,
                count: 2,
                nice: 0,
                io: false
            },
            TaskSpec {
                kind: TaskKind::Waker,
                arg: 10_000_000,
                uid: 1,
                count: 1,
                nice: 0,
                io: false
            },
            TaskSpec {
                kind: TaskKind::Makej,
                arg: 4,
                uid: 1,
                count: 1,
                nice: -5,
                io: false
            },
        ]
    );
    let echo = c.to_string();
    assert!(
        echo.starts_with("run=custom tasks=sleeper:50ms@1,hog@2*2,waker:10ms@1,makej:4@1%-5 "),
        "{echo}"
    );
    assert_eq!(Config::parse(&echo).unwrap().to_string(), echo);
}

#[test]
fn malformed_task_specs_are_rejected() {
    for (spec, why) in [
        ("hog:5ms", "takes none"),
        ("sleeper:fast", "bad ARG"),
        ("sleeper:10", "bad ARG"),
        ("lat3:99us", "bad ARG"),
        ("bogus", "unknown kind"),
        ("hog@x", "bad UID"),
        ("hog*0", "bad COUNT"),
        ("hog*65", "bad COUNT"),
        ("hog%20", "bad NICE"),
        ("hog%-21", "bad NICE"),
        // Regression: the first panicked on negation, the second wrapped
        // to nice -1.
        ("hog%-9223372036854775808", "bad NICE"),
        ("hog%18446744073709551615", "bad NICE"),
        ("hog%99999999999999999999", "bad NICE"),
        ("hog%--1", "bad NICE"),
        ("hog%-", "bad NICE"),
        ("hog%", "bad NICE"),
        ("hog*2@1", "out of order"),
        ("hog@1@2", "out of order"),
        ("makej:0", "bad ARG"),
        ("makej:10/disk", "bad ARG"),
        ("makej:/io", "bad ARG"),
        ("sleeper:10ms/io", "bad ARG"),
    ] {
        let e = error_of(&format!("run=custom tasks={spec}"));
        assert_eq!(e.option, "tasks", "{spec}");
        assert!(e.reason.contains(why), "{spec}: {}", e.reason);
    }
    assert!(
        error_of("run=custom tasks=hog*64,hog*64,hog*64,hog*64,hog")
            .reason
            .contains("257 tasks")
    );
    assert_eq!(error_of("tasks=hog").option, "tasks");
    assert_eq!(error_of("run=custom").option, "run");
    assert!(
        error_of("run=custom tasks=hog,,hog")
            .reason
            .contains("empty item")
    );
}
