//! The `truebench` binary: parse the command line, call the library, map errors to exit codes.

fn main() {
    // A link of the classic execl test's chain re-executes this binary: it must not pay for
    // anything else (the test measures exec).
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(truebench::bench::classic::EXECL_ARG)) {
        let left = args.next().unwrap_or_default();
        truebench::bench::classic::execl_link(&left.to_string_lossy());
    }
    std::process::exit(truebench::cli::main());
}
