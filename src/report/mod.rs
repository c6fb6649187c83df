//! Presenting results: one view per suite (views/) and one renderer per format (text.rs,
//! html.rs); JSON is the serde form of each document.

pub mod compare_table;
pub mod cpu_speed;
pub mod fleet_html;
pub mod fleet_text;
pub mod html;
pub mod probe_text;
pub mod svg;
pub mod text;
pub mod trend_html;
pub mod views;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// A table in the house style.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

/// Findings as indented text lines, with their evidence.
pub fn findings_text(findings: &[crate::finding::Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        let sev = match f.severity {
            crate::finding::Severity::Warning => "warning",
            crate::finding::Severity::Info => "info",
        };
        s.push_str(&format!("  [{sev}] {}: {}\n", f.id, f.message));
        for e in &f.evidence {
            s.push_str(&format!("      evidence: {e}\n"));
        }
    }
    s
}
