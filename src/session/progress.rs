//! Progress of a measuring command on stderr: on a terminal a bar that ticks every 100 ms
//! (so a long result shows time passing) and names what is running; elsewhere one line
//! per finished piece of work (a log, unless the command prints JSON).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    bar: ProgressBar,
    /// One line per finished piece of work (stderr is not a terminal).
    lines: bool,
    done: u64,
    total: u64,
}

impl Progress {
    /// Progress over `total` pieces of work; `quiet` keeps a non-terminal stderr silent
    /// (the command prints a JSON document).
    pub fn new(total: u64, quiet: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let bar = if tty {
            let pb = ProgressBar::new(total);
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
                )
                .expect("valid template"),
            );
            pb.enable_steady_tick(Duration::from_millis(100));
            pb
        } else {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        };
        Progress {
            bar,
            lines: !tty && !quiet,
            done: 0,
            total,
        }
    }

    /// What runs now (a benchmark and its case).
    pub fn running(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// A piece of work finished.
    pub fn finished(&mut self, what: &str) {
        self.done += 1;
        self.bar.inc(1);
        if self.lines {
            eprintln!("truebench: {}/{} {what}", self.done, self.total);
        }
    }

    /// A line of its own beside the progress (a disturbed round), in line mode only.
    pub fn note(&self, what: &str) {
        if self.lines {
            // Wrapped to 100 columns: a disturbance's words run long.
            eprint!(
                "{}",
                crate::report::views::wrap(&format!("truebench: {what}"))
            );
        }
    }

    /// More work than planned (rounds measured again, rounds bought for precision).
    pub fn add(&mut self, more: u64) {
        self.total += more;
        self.bar.set_length(self.total);
    }

    /// Pieces of work expected in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Pieces of work finished so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// The work now expected in all (what a budget lets start, re-estimated as it goes);
    /// never below what is done.
    pub fn set_total(&mut self, total: u64) {
        self.total = total.max(self.done);
        self.bar.set_length(self.total);
    }

    /// Clear the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
