//! The settings `truebench ab` measures the host under: one syntax (`KEY=VALUE`, joined by
//! commas, e.g. `cpuset=0,quota=0.5` or `thp=never`), parsed here and checked against the
//! probed machine before anything runs (a setting this host cannot take is refused in one
//! line: exit 2). Applying them is `policy::sides`.
//!
//! - per measuring thread: `cpus=LIST` (affinity), `class=other|batch|idle|fifo:P|rr:P`
//!   and `nice=N` (as `experiment`'s policies: one scheduling class, so not both),
//!   `mempolicy=local|bind|interleave|preferred` (over the nodes this process may use);
//! - a cgroup truebench makes and moves itself into (root): `cpuset=LIST`, `quota=CPUS`
//!   (a CFS quota at the 100 ms period), `weight=N` (1-10000; `cpu.shares` = N·1024/100
//!   on cgroup v1);
//! - system-wide (root; recorded and restored, `crate::knob`): `thp=always|madvise|never`,
//!   `clocksource=NAME`.

use super::{Class, Memory, Policy};
use crate::probe::ProbeDoc;
use std::fmt;

/// One setting.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    Cpus(Vec<u32>),
    Cpuset(Vec<u32>),
    /// CPUs of CFS quota.
    Quota(f64),
    Weight(u64),
    /// `class=` or `nice=` (one scheduling class).
    Class(Class),
    Mempolicy(Memory),
    Thp(String),
    Clocksource(String),
}

/// The syntax, for errors and `--help`.
pub const SYNTAX: &str = "cpus=LIST, cpuset=LIST, quota=CPUS, weight=N, class=other|batch|idle|fifo:P|rr:P, nice=N, mempolicy=local|bind|interleave|preferred, thp=always|madvise|never, clocksource=NAME; joined by commas (cpuset=0,quota=0.5)";

/// The THP modes `thp=` takes.
pub const THP_MODES: &[&str] = &["always", "madvise", "never"];

impl Setting {
    /// What it sets: one setting per key in a side (`class` and `nice` share one).
    pub fn key(&self) -> &'static str {
        match self {
            Setting::Cpus(_) => "cpus",
            Setting::Cpuset(_) => "cpuset",
            Setting::Quota(_) => "quota",
            Setting::Weight(_) => "weight",
            Setting::Class(_) => "class",
            Setting::Mempolicy(_) => "mempolicy",
            Setting::Thp(_) => "thp",
            Setting::Clocksource(_) => "clocksource",
        }
    }

    /// Whether it needs a cgroup of its own.
    pub fn in_cgroup(&self) -> bool {
        matches!(
            self,
            Setting::Cpuset(_) | Setting::Quota(_) | Setting::Weight(_)
        )
    }

    /// Whether it changes the whole host (recorded before the change, restored after).
    pub fn system_wide(&self) -> bool {
        matches!(self, Setting::Thp(_) | Setting::Clocksource(_))
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = crate::probe::cpulist::format_list;
        match self {
            Setting::Cpus(c) => write!(f, "cpus={}", list(c)),
            Setting::Cpuset(c) => write!(f, "cpuset={}", list(c)),
            Setting::Quota(q) => write!(f, "quota={q}"),
            Setting::Weight(w) => write!(f, "weight={w}"),
            Setting::Class(Class::Nice(n)) => write!(f, "nice={n}"),
            Setting::Class(c) => write!(f, "class={c}"),
            Setting::Mempolicy(m) => write!(f, "mempolicy={m}"),
            Setting::Thp(m) => write!(f, "thp={m}"),
            Setting::Clocksource(c) => write!(f, "clocksource={c}"),
        }
    }
}

/// The settings of one side, each key at most once; empty: the host as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings(pub Vec<Setting>);

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("as found");
        }
        let parts: Vec<String> = self.0.iter().map(|s| s.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

impl Settings {
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.0.iter().find(|s| s.key() == key)
    }

    /// The per-thread part as an execution policy (class and memory policy).
    pub fn thread_policy(&self) -> Policy {
        let mut p = Policy::OS;
        for s in &self.0 {
            match s {
                Setting::Class(c) => p.class = Some(*c),
                Setting::Mempolicy(m) => p.memory = Some(*m),
                _ => {}
            }
        }
        p
    }
}

fn cpus(key: &str, v: &str) -> Result<Vec<u32>, String> {
    let c = crate::probe::cpulist::parse_list(v)
        .map_err(|e| format!("{key}={v}: not a CPU list ({e}); e.g. 0-1 or 0,2"))?;
    if c.is_empty() {
        return Err(format!("{key}={v}: an empty CPU list"));
    }
    Ok(c)
}

fn one(key: &str, v: &str) -> Result<Setting, String> {
    let class = |c: &str| -> Result<Class, String> {
        match c.parse::<Policy>() {
            Ok(p) if p.class.is_some() && p.memory.is_none() && p.capacity.is_none() => {
                Ok(p.class.unwrap_or(Class::Other))
            }
            Ok(_) => Err(format!(
                "{key}={v}: not a scheduling class (other, batch, idle, fifo:P, rr:P)"
            )),
            Err(e) => Err(format!("{key}={v}: {e}")),
        }
    };
    Ok(match key {
        "cpus" => Setting::Cpus(cpus(key, v)?),
        "cpuset" => Setting::Cpuset(cpus(key, v)?),
        "quota" => {
            let q: f64 = v
                .parse()
                .map_err(|_| format!("quota={v}: a quota is a number of CPUs (0.5, 1.5)"))?;
            crate::loadstep::capacity::check_quota(q, crate::loadstep::capacity::DEFAULT_PERIOD_US)
                .map_err(|e| format!("quota={v}: {e}"))?;
            Setting::Quota(q)
        }
        "weight" => match v.parse::<u64>() {
            Ok(w) if (1..=10_000).contains(&w) => Setting::Weight(w),
            _ => {
                return Err(format!(
                    "weight={v}: a CPU weight is 1 to 10000 (100 is the default)"
                ))
            }
        },
        "class" if v.starts_with("nice") => {
            return Err(format!("class={v}: give a nice value as nice=N"))
        }
        "class" => Setting::Class(class(v)?),
        "nice" => Setting::Class(class(&format!("nice:{v}"))?),
        "mempolicy" => match format!("os+{v}").parse::<Policy>() {
            Ok(Policy {
                memory: Some(m),
                class: None,
                capacity: None,
                ..
            }) => Setting::Mempolicy(m),
            _ => {
                return Err(format!(
                    "mempolicy={v}: a memory policy is local, bind, interleave or preferred"
                ))
            }
        },
        "thp" if THP_MODES.contains(&v) => Setting::Thp(v.into()),
        "thp" => return Err(format!("thp={v}: THP is always, madvise or never")),
        "clocksource" if !v.is_empty() => Setting::Clocksource(v.into()),
        _ => return Err(format!("unknown setting '{key}={v}' ({SYNTAX})")),
    })
}

/// Parse `KEY=VALUE[,KEY=VALUE...]`; a piece without `=` continues the CPU list before it
/// (`cpus=0,2,thp=never` is `cpus=0,2` and `thp=never`).
pub fn parse(s: &str) -> Result<Settings, String> {
    let mut pieces: Vec<(String, String)> = vec![];
    for piece in s.split(',').map(str::trim) {
        match piece.split_once('=') {
            Some((k, v)) => pieces.push((k.trim().to_string(), v.trim().to_string())),
            None => match pieces.last_mut() {
                Some((k, v)) if (k == "cpus" || k == "cpuset") && !piece.is_empty() => {
                    v.push(',');
                    v.push_str(piece);
                }
                _ => return Err(format!("'{piece}' is not KEY=VALUE ({SYNTAX})")),
            },
        }
    }
    let mut out: Vec<Setting> = vec![];
    for (k, v) in pieces {
        let setting = one(&k, &v)?;
        if let Some(twice) = out.iter().find(|x| x.key() == setting.key()) {
            return Err(format!(
                "'{s}' gives {} twice ({twice} and {setting})",
                setting.key()
            ));
        }
        out.push(setting);
    }
    Ok(Settings(out))
}

/// What the host offers that the checks read: read live by [`Host::live`], a fixture in
/// tests.
#[derive(Debug, Clone, Default)]
pub struct Host {
    pub root: bool,
    /// Why no cgroup can be made here (None: one can).
    pub no_cgroup: Option<String>,
    /// THP's file as read (`always [madvise] never`), None when absent.
    pub thp: Option<String>,
    /// The clocksources the kernel offers.
    pub clocksources: Vec<String>,
    /// Why no memory policy can be set (None: one can).
    pub no_mempolicy: Option<String>,
}

impl Host {
    pub fn live() -> Host {
        let root = nix::unistd::geteuid().is_root();
        Host {
            root,
            no_cgroup: crate::loadstep::capacity::Layout::live()
                .err()
                .map(|e| e.replace("capacity policies", "cgroup settings")),
            thp: std::fs::read_to_string(crate::knob::THP).ok(),
            clocksources: crate::measure::clocksource::available().unwrap_or_default(),
            no_mempolicy: super::apply::memory_policies().err(),
        }
    }
}

/// Why this host cannot take `s` (None: it can), checked before anything runs.
pub fn refusal(s: &Setting, env: &ProbeDoc, host: &Host) -> Option<String> {
    let usable = &env.cpus.usable;
    let outside = |c: &[u32]| -> Option<String> {
        let out: Vec<u32> = c.iter().filter(|x| !usable.contains(x)).copied().collect();
        (!out.is_empty()).then(|| {
            format!(
                "{s}: CPU {} is not among the CPUs this process may use ({})",
                crate::probe::cpulist::format_list(&out),
                crate::probe::cpulist::format_list(usable)
            )
        })
    };
    let root = |what: &str| (!host.root).then(|| format!("{s}: {what} needs root"));
    match s {
        Setting::Cpus(c) => outside(c),
        Setting::Cpuset(_) | Setting::Quota(_) | Setting::Weight(_) => root("a cgroup setting")
            .or_else(|| host.no_cgroup.as_ref().map(|e| format!("{s}: {e}")))
            .or_else(|| match s {
                Setting::Cpuset(c) => outside(c),
                Setting::Quota(q) if *q > usable.len() as f64 + 1e-9 => Some(format!(
                    "{s}: a quota above the {} this process may use is never reached",
                    crate::units::count(usable.len(), "CPU")
                )),
                _ => None,
            }),
        Setting::Class(_) => {
            let p = Policy {
                class: match s {
                    Setting::Class(c) => Some(*c),
                    _ => None,
                },
                ..Policy::OS
            };
            p.missing_privilege().map(|e| format!("{s}: {e}"))
        }
        Setting::Mempolicy(_) => host.no_mempolicy.as_ref().map(|e| format!("{s}: {e}")),
        Setting::Thp(m) => root("a system-wide setting").or_else(|| match &host.thp {
            None => Some(format!("{s}: this kernel has no {}", crate::knob::THP)),
            Some(t) if !crate::knob::choices(t).contains(m) => Some(format!(
                "{s}: this kernel's THP offers {}",
                crate::knob::choices(t).join(", ")
            )),
            Some(_) => None,
        }),
        Setting::Clocksource(c) => root("a system-wide setting").or_else(|| {
            (!host.clocksources.contains(c)).then(|| {
                format!(
                    "{s}: this kernel offers the clocksources {}",
                    if host.clocksources.is_empty() {
                        "(none readable)".to_string()
                    } else {
                        host.clocksources.join(", ")
                    }
                )
            })
        }),
    }
}

/// The first setting of either side this host cannot take, in one line.
pub fn check(sides: [&Settings; 2], env: &ProbeDoc, host: &Host) -> Result<(), String> {
    for s in sides.iter().flat_map(|x| &x.0) {
        if let Some(why) = refusal(s, env, host) {
            return Err(why);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_parses_and_prints_back() {
        for s in [
            "cpus=0",
            "cpus=0-1",
            "cpuset=0,2",
            "quota=0.5",
            "weight=50",
            "class=batch",
            "class=fifo:10",
            "nice=10",
            "nice=-5",
            "mempolicy=interleave",
            "thp=never",
            "clocksource=kvm-clock",
            "cpuset=0,quota=0.5",
            "cpus=0,2,thp=never",
        ] {
            let p = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(p.to_string(), s);
            assert_eq!(parse(&p.to_string()).unwrap(), p);
        }
        let p = parse("cpus=0,2,thp=never").unwrap();
        assert_eq!(
            p.0,
            [Setting::Cpus(vec![0, 2]), Setting::Thp("never".into())]
        );
        assert_eq!(
            parse("nice=3").unwrap().thread_policy().class,
            Some(Class::Nice(3))
        );
        assert_eq!(Settings::default().to_string(), "as found");
    }

    #[test]
    fn bad_settings_are_refused_with_the_reason() {
        for (s, says) in [
            ("thp=sometimes", "always, madvise or never"),
            ("quota=0", "quota"),
            ("quota=fast", "number of CPUs"),
            ("weight=0", "1 to 10000"),
            ("nice=20", "-20 to 19"),
            ("class=nice:3", "nice=N"),
            ("class=pinned", "not a scheduling class"),
            ("mempolicy=fast", "local, bind"),
            ("cpus=x", "not a CPU list"),
            ("nice=1,class=batch", "class twice"),
            ("thp=never,thp=always", "thp twice"),
            ("speed=max", "unknown setting"),
            ("never", "not KEY=VALUE"),
            ("", "not KEY=VALUE"),
            ("clocksource=", "unknown setting"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    fn env(usable: &[u32]) -> ProbeDoc {
        let mut e = crate::probe::fixture("this-vm");
        e.cpus.usable = usable.to_vec();
        e
    }

    fn refused(s: &str, host: &Host) -> Option<String> {
        let settings = parse(s).unwrap();
        check([&Settings::default(), &settings], &env(&[0, 1]), host).err()
    }

    #[test]
    fn a_setting_this_host_cannot_take_is_refused_before_anything_runs() {
        let root = Host {
            root: true,
            thp: Some("always [madvise] never".into()),
            clocksources: vec!["tsc".into(), "kvm-clock".into()],
            ..Host::default()
        };
        for ok in [
            "cpus=1",
            "cpuset=0",
            "quota=0.5",
            "weight=50",
            "thp=never",
            "clocksource=kvm-clock",
        ] {
            assert_eq!(refused(ok, &root), None, "{ok}");
        }
        let user = Host {
            root: false,
            ..root.clone()
        };
        for (s, host, says) in [
            ("cpus=2", &root, "CPU 2 is not among"),
            ("cpuset=0-3", &root, "CPU 2-3 is not among"),
            ("quota=3", &root, "never reached"),
            ("thp=never", &user, "needs root"),
            ("clocksource=tsc", &user, "needs root"),
            ("cpuset=0", &user, "needs root"),
            (
                "clocksource=hpet",
                &root,
                "offers the clocksources tsc, kvm-clock",
            ),
        ] {
            let e = refused(s, host).unwrap_or_else(|| panic!("{s} taken"));
            assert!(e.contains(says), "{s}: {e}");
            assert!(!e.contains('\n'), "{s}: not one line: {e}");
        }
        let no_thp = Host {
            thp: None,
            ..root.clone()
        };
        assert!(refused("thp=never", &no_thp)
            .unwrap()
            .contains("no /sys/kernel/mm"));
        let no_cg = Host {
            no_cgroup: Some("no cgroup hierarchy with the cpu controller is mounted".into()),
            ..root.clone()
        };
        assert!(refused("weight=10", &no_cg)
            .unwrap()
            .contains("cpu controller"));
        assert_eq!(refused("cpus=0", &no_cg), None, "affinity needs no cgroup");
        let no_numa = Host {
            no_mempolicy: Some("no NUMA".into()),
            ..root
        };
        assert!(refused("mempolicy=bind", &no_numa)
            .unwrap()
            .contains("no NUMA"));
    }
}
