//! The program the classic execl test execs: a small, dependency-free link of an exec
//! chain, so the test measures what UnixBench's execl measures (replacing a small process
//! image), not the size and relocations of truebench's own binary.
//!
//! It is not a module of the crate: build.rs compiles it on its own (no_std, panic=abort,
//! stripped; about 10 KB) and the classic suite embeds the result and writes it into the
//! test's directory. `execl-link N` execs itself with N-1 until N is 1, then exits 73;
//! an argument that is not a decimal number exits 2.
#![no_std]
#![no_main]

use core::ffi::{c_char, c_int};

#[link(name = "c")]
extern "C" {
    fn execv(path: *const c_char, argv: *const *const c_char) -> c_int;
    fn _exit(status: c_int) -> !;
}

/// The exit status that ends a chain (the classic suite checks it).
const DONE: c_int = 73;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: _exit ends the process at once.
    unsafe { _exit(126) }
}

/// The prebuilt core library names an unwinding personality even under panic=abort;
/// nothing calls it.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// The decimal number at `s` (NUL-terminated), or None if it is anything else.
///
/// # Safety
/// `s` points to a NUL-terminated string.
unsafe fn parse(mut s: *const u8) -> Option<u64> {
    let mut n: u64 = 0;
    if *s == 0 {
        return None;
    }
    while *s != 0 {
        let d = (*s).wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(d as u64)?;
        s = s.add(1);
    }
    Some(n)
}

#[no_mangle]
pub extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the kernel passes argc NUL-terminated arguments.
    let n = match (argc >= 2).then(|| unsafe { parse(*argv.add(1) as *const u8) }) {
        Some(Some(n)) => n,
        _ => unsafe { _exit(2) },
    };
    if n <= 1 {
        // SAFETY: _exit ends the process at once.
        unsafe { _exit(DONE) }
    }
    // n - 1 in decimal, NUL-terminated, at the end of `buf`.
    let mut buf = [0u8; 24];
    let mut i = buf.len() - 1;
    let mut m = n - 1;
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    // SAFETY: argv[0] and buf are NUL-terminated and outlive the call; argv is null-ended.
    unsafe {
        let args = [*argv, buf[i..].as_ptr() as *const c_char, core::ptr::null()];
        execv(c"/proc/self/exe".as_ptr(), args.as_ptr());
        _exit(127)
    }
}
