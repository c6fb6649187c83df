//! Placement resolution on every fixture tree: which CPUs each named placement picks, and
//! which placements are not applicable and why.

mod common;

use truebench::placement::{resolve_all, NAMES};
use truebench::probe::{probe, sysroot::SysRoot};

fn resolved(name: &str) -> Vec<(String, Result<[u32; 2], String>)> {
    let p = probe(&SysRoot::captured(common::fixture(name)));
    let all: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    let (ok, na) = resolve_all(&all, &p);
    let mut out: Vec<(String, Result<[u32; 2], String>)> = Vec::new();
    for n in NAMES {
        if let Some(r) = ok.iter().find(|r| r.name == *n) {
            out.push((n.to_string(), Ok(r.cpus.unwrap_or([u32::MAX, u32::MAX]))));
        } else if let Some(e) = na.iter().find(|e| e.name == *n) {
            out.push((n.to_string(), Err(e.reason.clone())));
        } else {
            panic!("{name}: placement {n} silently dropped");
        }
    }
    out
}

const OS: [u32; 2] = [u32::MAX, u32::MAX];

fn check(name: &str, want: &[(&str, Result<[u32; 2], &str>)]) {
    let got = resolved(name);
    assert_eq!(got.len(), want.len(), "{name}");
    for ((gn, g), (wn, w)) in got.iter().zip(want) {
        assert_eq!(gn, wn);
        match (g, w) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}: {gn} CPUs"),
            (Err(a), Err(b)) => assert!(
                a.starts_with(b),
                "{name}: {gn}: reason {a:?}, expected {b:?}"
            ),
            _ => panic!("{name}: {gn}: got {g:?}, expected {w:?}"),
        }
    }
}

#[test]
fn two_socket_smt() {
    check(
        "two-socket-smt",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 20])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC per package")),
            ("cross-package", Ok([0, 10])),
            ("cross-node", Err("same CPUs as cross-package")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn epyc_multi_llc_two_nodes() {
    check(
        "epyc-multi-llc-2node",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 16])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 4])),
            ("cross-package", Err("one package")),
            ("cross-node", Ok([0, 8])),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn vms() {
    check(
        "vm-private-llc",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Ok([0, 1])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "vm-socket-per-vcpu",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Err("one LLC per package")),
            ("cross-package", Ok([0, 1])),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "vm-smt-no-shared-cache",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 1])),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Ok([0, 2])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "this-vm",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn arm_clusters_and_limited_containers() {
    check(
        "arm-no-l3",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 4])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    // The cpuset 0-5 holds no SMT pair (siblings are 8 apart): nothing is guessed from numbers.
    check(
        "container-quota",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no core has two usable SMT threads")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "offline-cpus",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn epyc_256() {
    check(
        "epyc-256",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 128])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 8])),
            ("cross-package", Ok([0, 64])),
            ("cross-node", Ok([0, 32])),
            ("os", Ok(OS)),
        ],
    );
}

/// Every fixture tree (a directory with sys/ inside).
fn all_trees() -> Vec<String> {
    let dir = common::fixture("");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("sys").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn cpus_of(v: &serde_json::Value) -> Option<Vec<u32>> {
    v.as_array()
        .map(|a| a.iter().map(|c| c.as_u64().unwrap() as u32).collect())
}

/// `truebench plan --root TREE --json` on every tree: every case's CPUs are usable and
/// have the relation its name claims; a case that cannot exist says why.
#[test]
fn plan_places_sensibly_on_every_tree() {
    let env = common::TestEnv::new();
    let trees = all_trees();
    assert!(trees.len() >= 20, "{trees:?}");
    for tree in trees {
        let dir = common::fixture(&tree);
        let plan = env.json(&[
            "plan",
            "ctx,c2c,memory,classic.dhrystone",
            "--root",
            dir.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(plan["schema"], "truebench.plan/1");
        let p = probe(&SysRoot::captured(&dir));
        let t = truebench::placement::Topo::new(&p);
        let node_of = |c: u32| p.numa.nodes.iter().position(|n| n.cpus.contains(&c));
        let cpu_nodes = p
            .numa
            .nodes
            .iter()
            .filter(|n| n.cpus.iter().any(|c| p.cpus.usable.contains(c)))
            .count();
        let cases = plan["cases"].as_array().unwrap();
        for c in cases {
            let (bench, case) = (
                c["benchmark"].as_str().unwrap(),
                c["case"].as_str().unwrap(),
            );
            let ctx = format!("{tree}: {bench} {case}");
            if let Some(why) = c["skipped"].as_str() {
                assert!(!why.is_empty(), "{ctx}: skipped without a reason");
                if bench == "ctx.pipe@1" && case == "cross-node" && !why.starts_with("same CPUs") {
                    assert!(cpu_nodes < 2, "{ctx}: {why} with {cpu_nodes} CPU nodes");
                }
                if bench == "ctx.pipe@1" && case == "smt-sibling" {
                    assert!(
                        p.topology.threads_per_core < 2 || why.contains("usable SMT"),
                        "{ctx}: {why}"
                    );
                }
                continue;
            }
            let Some(cpus) = cpus_of(&c["cpus"]) else {
                continue;
            };
            for x in &cpus {
                assert!(p.cpus.usable.contains(x), "{ctx}: CPU {x} not usable");
            }
            if bench == "ctx.pipe@1" {
                let (a, b) = (cpus[0], cpus[1]);
                let core = |x: u32| p.topology.place(x).unwrap().core_cpus.clone();
                match case {
                    "smt-sibling" => {
                        assert!(
                            a != b && core(a).contains(&b),
                            "{ctx}: {a},{b} not one core"
                        )
                    }
                    "same-llc" => {
                        assert!(!core(a).contains(&b), "{ctx}: same core");
                        assert!(p.topology.llc_of(a).unwrap().contains(&b), "{ctx}");
                    }
                    "cross-package" => assert_ne!(
                        p.topology.place(a).unwrap().package,
                        p.topology.place(b).unwrap().package,
                        "{ctx}"
                    ),
                    "cross-node" => {
                        assert!(cpu_nodes >= 2, "{ctx}: one CPU node");
                        assert_ne!(node_of(a), node_of(b), "{ctx}");
                    }
                    "same-cpu" => assert_eq!(a, b, "{ctx}"),
                    _ => {}
                }
            }
            if bench == "c2c.line@1" {
                let rel = c["why"].as_str().unwrap().split(' ').next().unwrap();
                assert_eq!(t.relation(cpus[0], cpus[1]).name(), rel, "{ctx}");
            }
            if bench == "memory.numa@1" {
                let mem: u32 = case
                    .split("-> node")
                    .nth(1)
                    .and_then(|x| x.split(' ').next())
                    .and_then(|x| x.parse().ok())
                    .unwrap();
                assert!(p.cpus.usable_mems.contains(&mem), "{ctx}: memory refused");
                let from = node_of(cpus[0]).unwrap();
                assert!(
                    cpus.iter().all(|x| node_of(*x) == Some(from)),
                    "{ctx}: CPUs of several nodes"
                );
            }
            if bench == "memory.bandwidth@1" {
                let mut d = cpus.clone();
                d.sort();
                d.dedup();
                assert_eq!(d.len(), cpus.len(), "{ctx}: a CPU twice");
            }
        }
        // The classic suite's N is the usable width narrowed by the quota.
        let n = cases
            .iter()
            .filter(|c| c["benchmark"] == "classic.dhrystone@3")
            .filter_map(|c| {
                c["case"]
                    .as_str()?
                    .strip_prefix("copies=")?
                    .parse::<usize>()
                    .ok()
            })
            .max()
            .unwrap();
        let want = match p.cpus.cgroup_quota {
            Some(q) if (q.ceil() as usize) < p.cpus.usable_width => q.ceil() as usize,
            _ => p.cpus.usable_width,
        };
        assert_eq!(n, want, "{tree}: classic N");
    }
}

/// On this machine, `plan` says what `run` then does: the same placements with the same
/// CPUs, and the same cases skipped.
#[test]
fn plan_says_what_run_does() {
    let env = common::TestEnv::new();
    let plan = env.json(&["plan", "ctx", "--json"]);
    let run = env.run(&["ctx", "--samples", "3", "--mode", "thread"]);
    let planned: Vec<(String, Option<Vec<u32>>)> = plan["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["skipped"].is_null())
        .map(|c| (c["case"].as_str().unwrap().to_string(), cpus_of(&c["cpus"])))
        .collect();
    let ran: Vec<(String, Option<Vec<u32>>)> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["placement"]["name"].as_str().unwrap().to_string(),
                cpus_of(&r["placement"]["cpus"]),
            )
        })
        .collect();
    assert!(!planned.is_empty());
    assert_eq!(planned, ran, "plan {planned:?} vs run {ran:?}");
    let skipped_plan: Vec<&str> = plan["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["skipped"].is_null())
        .map(|c| c["case"].as_str().unwrap())
        .collect();
    let skipped_run: Vec<&str> = run["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["case"].as_str().unwrap())
        .collect();
    assert_eq!(skipped_plan, skipped_run);
}

/// `plan` takes run's placement options and refuses what run refuses.
#[test]
fn plan_takes_runs_placement_options() {
    let env = common::TestEnv::new();
    let dir = common::fixture("two-socket-smt");
    let root = dir.to_str().unwrap();
    let plan = env.json(&[
        "plan",
        "ctx",
        "--root",
        root,
        "--cpus",
        "0,10",
        "--placement",
        "smt-sibling",
        "--json",
    ]);
    let cases: Vec<(String, Option<Vec<u32>>)> = plan["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["case"].as_str().unwrap().to_string(), cpus_of(&c["cpus"])))
        .collect();
    assert_eq!(
        cases,
        vec![
            ("smt-sibling".to_string(), Some(vec![0, 20])),
            ("cpus".to_string(), Some(vec![0, 10]))
        ]
    );
    // --mode as run takes it: the ctx cases name the modes they will run.
    let whys = |mode: &[&str]| -> Vec<String> {
        let plan = env.json(&[&["plan", "ctx", "--root", root, "--json"], mode].concat());
        plan["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["skipped"].is_null())
            .map(|c| c["why"].as_str().unwrap().to_string())
            .collect()
    };
    let thread = whys(&["--mode", "thread"]);
    assert!(!thread.is_empty() && thread.iter().all(|w| w.ends_with("(thread mode)")));
    let both = whys(&[]);
    assert!(
        both.iter()
            .all(|w| w.ends_with("(process and thread mode)")),
        "{both:?}"
    );
    let copies = env.json(&[
        "plan",
        "classic.dhrystone",
        "--root",
        root,
        "--copies",
        "3",
        "--json",
    ]);
    assert_eq!(copies["cases"][0]["case"], "copies=3");
    for bad in [
        vec!["plan", "ctx", "--root", root, "--placement", "sideways"],
        vec!["plan", "ctx", "--root", root, "--cpus", "0,99"],
        vec!["plan", "ctx", "--root", root, "--mode", "fibre"],
        vec!["plan", "nosuchsuite", "--root", root],
    ] {
        let out = env.cmd().args(&bad).output().unwrap();
        common::assert_refused(&env, &out, &bad);
    }
}
