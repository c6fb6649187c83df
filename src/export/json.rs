//! `--format json`: the run document itself (`truebench.result/1`), indented (`json_text`), as
//! `import` reads it back. One run per document.

use super::Export;
use crate::result::RunDocument;

pub struct Json;

impl Export for Json {
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>> {
        let [doc] = runs else {
            anyhow::bail!("the JSON document holds one run, {} given", runs.len());
        };
        Ok((crate::json_text::pretty(doc)? + "\n").into_bytes())
    }

    fn single_run(&self) -> bool {
        true
    }
}
