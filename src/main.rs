//! The `truebench` binary: parse the command line, call the library, map errors to exit codes.

use truebench::bench::classic;

fn main() {
    // The classic suite re-executes this binary as a copy worker (a fresh small process per
    // copy), which may not pay for anything else first.
    // Arguments as OsString: a non-UTF-8 argument is clap's to refuse (exit 2), not a panic.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let text = |i: usize| args.get(i).and_then(|a| a.to_str());
    match text(0) {
        Some(classic::WORKER_ARG) => {
            let rest: Vec<String> = args[1..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            classic::copy_worker(&rest)
        }
        Some(truebench::watchdog::ARG) => {
            let rest: Vec<String> = args[1..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            std::process::exit(truebench::watchdog::main(&rest))
        }
        _ => std::process::exit(truebench::cli::main()),
    }
}
