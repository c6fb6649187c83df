//! The copy protocol's shared memory, in one place for both sides: the classic suite (which
//! maps it, releases the copies and reads their results) and the small kernel worker
//! (src/bench/classic/kernel_worker.rs, built on its own by build.rs without the standard
//! library, which includes this file by path). A memory file holds a `Header` and then one
//! `Slot` per copy; all-zero bytes are a valid start.

use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64};

/// Bytes of a copy's error text (longer reasons are cut).
pub const ERROR_BYTES: usize = 120;
/// Words of a CPU mask: CPUs 0-1023, a bit each.
pub const CPU_WORDS: usize = 16;

/// What one copy hands back.
#[repr(C)]
pub struct Slot {
    /// Loops completed in the window, and the copy's own span around them (CLOCK_MONOTONIC).
    pub count: AtomicU64,
    pub span_ns: AtomicU64,
    /// The copy's pid and the pid of the partner it talks to (context-switch), 0 if none.
    pub pid: AtomicI32,
    pub partner: AtomicI32,
    /// What the copy itself saw of the processes it forks (process creation; 0 elsewhere):
    /// forks watched, how many of their children started on the CPU the fork ran on, and
    /// the CPUs the children started on (`CPU_WORDS` words, a bit per CPU).
    pub forks_seen: AtomicU64,
    pub forks_colocated: AtomicU64,
    pub child_cpus: [AtomicU64; CPU_WORDS],
    /// 0 = fine; else the copy failed and `error` holds why.
    pub failed: AtomicU32,
    pub error: [u8; ERROR_BYTES],
}

/// The pass's flags: copies ready (counted), go (the barrier opens), stop (the window
/// closes). Aligned so the slots after it are aligned too.
#[repr(C, align(64))]
pub struct Header {
    pub ready: AtomicU32,
    pub go: AtomicU32,
    pub stop: AtomicU32,
}

/// The bytes of the shared memory for `copies` copies.
pub const fn shared_len(copies: usize) -> usize {
    core::mem::size_of::<Header>() + copies * core::mem::size_of::<Slot>()
}

/// The byte offset of slot `i`.
pub const fn slot_offset(i: usize) -> usize {
    core::mem::size_of::<Header>() + i * core::mem::size_of::<Slot>()
}
