//! The `truebench` binary: parse the command line, call the library, map errors to exit codes.

use truebench::bench::classic;

fn main() {
    // The classic suite re-executes this binary as a copy worker (a fresh small process per
    // copy), which may not pay for anything else first.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(classic::WORKER_ARG) => classic::copy_worker(&args[1..]),
        _ => std::process::exit(truebench::cli::main()),
    }
}
