//! The closed choices of the command line as clap `ValueEnum`s, so a wrong value is refused
//! by clap (exit 2, with the possible values) and `--help` lists them: placements (built
//! from the placement relations, plus `os`), ctx task modes. (Execution policies have their own parser: src/policy/.)

use crate::placement::Relation;
use clap::builder::PossibleValue;
use clap::ValueEnum;
use std::sync::LazyLock;

/// A named placement for communication tests: a relation between two CPUs, or `os`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Pinned(Relation),
    /// Not pinned: the scheduler places the tasks.
    Os,
}

static PLACEMENTS: LazyLock<Vec<Placement>> = LazyLock::new(|| {
    Relation::ALL
        .iter()
        .map(|r| Placement::Pinned(*r))
        .chain([Placement::Os])
        .collect()
});

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Pinned(r) => r.name(),
            Placement::Os => "os",
        }
    }
}

impl ValueEnum for Placement {
    fn value_variants<'a>() -> &'a [Self] {
        PLACEMENTS.as_slice()
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

/// Task mode of ctx tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Two processes (fork).
    Process,
    /// Two threads of one process.
    Thread,
    /// Both, one after the other.
    Both,
}

impl Mode {
    /// The mode names the ctx benchmark runs.
    pub fn names(self) -> Vec<String> {
        match self {
            Mode::Process => vec!["process".into()],
            Mode::Thread => vec!["thread".into()],
            Mode::Both => vec!["process".into(), "thread".into()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choices_are_the_names_the_library_knows() {
        let placements: Vec<&str> = Placement::value_variants()
            .iter()
            .map(|p| p.name())
            .collect();
        assert_eq!(placements, crate::placement::NAMES);
    }
}
