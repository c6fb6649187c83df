//! The twelve index tests of the classic suite: each one's id, what it measures, its kind
//! of work, UnixBench's unit and George's baseline (UnixBench pgms/index.base), and the
//! length of its passes.

use super::{Classic, Kind, Length};

pub static DHRYSTONE: Classic = Classic {
    id: "classic.dhrystone@3",
    what: "Dhrystone 2.1 main-loop passes per second (integer, string and record work; compiler-sensitive), lps",
    kind: Kind::Dhrystone,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 116700.0,
    length: Length::Long,
};
pub static WHETSTONE: Classic = Classic {
    id: "classic.whetstone@3",
    what: "double-precision Whetstone, millions of Whetstone instructions per second, the work UnixBench's gcc build does (params.work), MWIPS",
    kind: Kind::Whetstone,
    unit: "MWIPS",
    per_s_to_unit: 1.0,
    baseline: 55.0,
    length: Length::Long,
};
pub static EXECL: Classic = Classic {
    id: "classic.execl@3",
    what: "execs per second of a small program (about 20 KB) replacing itself, chains forked by the same small program, lps",
    kind: Kind::Execl,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 43.0,
    length: Length::Medium,
};
pub static FILE_COPY_1024: Classic = Classic {
    id: "classic.file-copy-1024@1",
    what:
        "KiB/s copied file to file with 1024-byte read/write, 2000 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 1024,
        file_kb: 2000,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 3960.0,
    length: Length::Medium,
};
pub static FILE_COPY_256: Classic = Classic {
    id: "classic.file-copy-256@1",
    what:
        "KiB/s copied file to file with 256-byte read/write, 500 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 256,
        file_kb: 500,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 1655.0,
    length: Length::Medium,
};
pub static FILE_COPY_4096: Classic = Classic {
    id: "classic.file-copy-4096@1",
    what:
        "KiB/s copied file to file with 4096-byte read/write, 8000 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 4096,
        file_kb: 8000,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 5800.0,
    length: Length::Medium,
};
pub static PIPE_THROUGHPUT: Classic = Classic {
    id: "classic.pipe-throughput@1",
    what: "512-byte write then read on one pipe in one process (no context switch), lps",
    kind: Kind::Pipe,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 12440.0,
    length: Length::Long,
};
pub static CONTEXT_SWITCH: Classic = Classic {
    id: "classic.context-switch@1",
    what: "round trips of a counter between two processes over two pipes, placed by the scheduler (observed), lps",
    kind: Kind::ContextSwitch,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 4000.0,
    length: Length::Long,
};
pub static PROCESS_CREATION: Classic = Classic {
    id: "classic.process-creation@3",
    what: "fork of a small program (about 20 KB), the child leaves through the C library's exit, the parent waits: loops per second; placed by the scheduler (where children start is observed), lps",
    kind: Kind::ProcessCreation,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 126.0,
    length: Length::Medium,
};
pub static SHELL_1: Classic = Classic {
    id: "classic.shell-1@1",
    what: "loops per minute of a shell script (sort, od | sort, grep | tee | wc) run once per loop, lpm",
    kind: Kind::Shell(1),
    unit: "lpm",
    per_s_to_unit: 60.0,
    baseline: 42.4,
    length: Length::Shell,
};
pub static SHELL_8: Classic = Classic {
    id: "classic.shell-8@1",
    what: "loops per minute of 8 concurrent copies of the shell script, lpm",
    kind: Kind::Shell(8),
    unit: "lpm",
    per_s_to_unit: 60.0,
    baseline: 6.0,
    length: Length::Shell,
};
pub static SYSCALL: Classic = Classic {
    id: "classic.syscall@2",
    what: "loops of close(dup(fd)), getpid (through syscall()), getuid, umask (five system calls) per second, lps",
    kind: Kind::Syscall,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 15000.0,
    length: Length::Long,
};
