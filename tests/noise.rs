//! Noise detection on a real run: a CPU hog on the usable CPUs makes results carry
//! `noisy-neighbour` naming it; the same run alone does not. One test in its own binary,
//! so no sibling test is the neighbour.

mod common;

use common::TestEnv;
use serde_json::Value;

/// A busy shell loop, killed when dropped (also if an assertion fails).
struct Hog(std::process::Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn noisy(doc: &Value) -> Vec<String> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap().iter())
        .filter(|f| f["id"] == "noisy-neighbour")
        .map(|f| f["evidence"].to_string())
        .collect()
}

#[test]
fn a_cpu_hog_is_a_noisy_neighbour_and_a_quiet_run_has_none() {
    let env = TestEnv::new();
    let hog = Hog(std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap());
    let pid = hog.0.id();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let loud = env.run(&["timers", "--samples", "20"]);
    drop(hog);
    let found = noisy(&loud);
    assert!(!found.is_empty(), "no noisy-neighbour with a hog running");
    assert!(
        found.iter().any(|e| e.contains(&format!("pid {pid}"))),
        "hog not named: {found:?}"
    );

    // Without the hog: no finding names it, and a run with none at all comes within three
    // tries (the machine's own bursts, such as a kernel memory-reclaim thread, are real
    // neighbours too, but not every time).
    let mut seen = Vec::new();
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let quiet = env.run(&["timers", "--samples", "20"]);
        let found = noisy(&quiet);
        assert!(
            !found.iter().any(|e| e.contains(&format!("pid {pid}"))),
            "the hog named after it was killed: {found:?}"
        );
        if found.is_empty() {
            return;
        }
        seen.push(found);
    }
    panic!("noisy-neighbour in three quiet runs: {seen:?}");
}
