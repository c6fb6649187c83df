//! CPU (and node) lists as the kernel writes them: ranges (`0-3,8,10-11`) and hex masks
//! (`00000000,0000000f`), parsed to sorted numbers and formatted back; and the one reader
//! every sysfs list/mask file goes through (`read_cpus`): the list file, else its mask
//! twin, tolerant of trailing NULs and whitespace (some kernels end files with `\n\0`),
//! strict about anything else.

use super::sysroot::SysRoot;
use std::collections::BTreeSet;

/// The text of a sysfs list or mask without what some kernels append: trailing NULs,
/// newlines and blanks (and leading blanks).
pub fn clean(s: &str) -> &str {
    s.trim_matches(|c: char| c == '\0' || c.is_whitespace())
}

/// The highest CPU or node number believed (kernels allow at most 8192 CPUs today).
pub const MAX_ID: u32 = 65_535;

/// Parse a kernel range list such as `0-3,8,10-11`. An empty string is an empty list; an
/// empty item within a list (`0,,1`, `0,`) is refused with its position.
pub fn parse_list(s: &str) -> Result<Vec<u32>, String> {
    let s = clean(s);
    let mut set = BTreeSet::new();
    if s.is_empty() {
        return Ok(vec![]);
    }
    let mut at = 1;
    for (i, raw) in s.split(',').enumerate() {
        let part = raw.trim();
        if part.is_empty() {
            return Err(format!(
                "empty item {} (character {at}) in CPU list '{s}'",
                i + 1
            ));
        }
        at += raw.chars().count() + 1;
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a.parse().map_err(|_| format!("bad CPU range '{part}'"))?;
                let b: u32 = b.parse().map_err(|_| format!("bad CPU range '{part}'"))?;
                if b < a || b > MAX_ID {
                    return Err(format!("bad CPU range '{part}'"));
                }
                set.extend(a..=b);
            }
            None => {
                let n: u32 = part
                    .parse()
                    .map_err(|_| format!("bad CPU number '{part}'"))?;
                if n > MAX_ID {
                    return Err(format!("bad CPU number '{part}'"));
                }
                set.insert(n);
            }
        }
    }
    Ok(set.into_iter().collect())
}

/// Parse a kernel hex mask such as `00000000,0000000f` (32-bit words, most significant first).
pub fn parse_mask(s: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    let s = clean(s);
    let words: Vec<&str> = s.split(',').collect();
    if words.len() > (MAX_ID as usize + 1) / 32 {
        return Err(format!("CPU mask of {} words is too long", words.len()));
    }
    for (i, word) in words.iter().rev().enumerate() {
        let word = word.trim();
        if word.is_empty() || word.len() > 8 {
            return Err(format!("bad CPU mask '{s}'"));
        }
        let w = u32::from_str_radix(word, 16).map_err(|_| format!("bad CPU mask '{s}'"))?;
        for bit in 0..32 {
            if w & (1 << bit) != 0 {
                cpus.push(i as u32 * 32 + bit);
            }
        }
    }
    Ok(cpus)
}

/// Read a CPU (or node) set from sysfs: the list file `list`, else its mask twin `mask`
/// (older kernels have only masks: node `cpumap`, `thread_siblings`). Err names why no
/// set could be read: both absent, or the garbage found.
pub fn read_cpus(root: &SysRoot, list: &str, mask: &str) -> Result<Vec<u32>, String> {
    let mut why = Vec::new();
    match root.read_raw(list) {
        Some(s) => match parse_list(&s) {
            Ok(v) => return Ok(v),
            Err(e) => why.push(format!("{list}: {e}")),
        },
        None => why.push(format!("no {list}")),
    }
    if !mask.is_empty() {
        match root.read_raw(mask) {
            Some(s) => match parse_mask(&s) {
                Ok(v) => return Ok(v),
                Err(e) => why.push(format!("{mask}: {e}")),
            },
            None => why.push(format!("no {mask}")),
        }
    }
    Err(why.join("; "))
}

/// A list file outside the system-root layout (a cgroup directory found by path), read as
/// bounded as any sysfs file.
pub fn read_list_file(path: &std::path::Path) -> Result<Vec<u32>, String> {
    let s = crate::bounded::read_regular(path, super::sysroot::SYSFS_MAX_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let s = String::from_utf8_lossy(&s);
    parse_list(&s).map_err(|e| format!("{}: {e}", path.display()))
}

/// Format sorted CPU numbers as a compact range list (`0-3,8`).
pub fn format_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// The CPUs present in both lists.
pub fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let b: BTreeSet<u32> = b.iter().copied().collect();
    a.iter().copied().filter(|c| b.contains(c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(
            parse_list("0-3,8,10-11").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_list("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_list("5\n").unwrap(), vec![5]);
        assert_eq!(parse_list("0-7\n\0").unwrap(), (0..8).collect::<Vec<u32>>());
        assert_eq!(parse_list("0-1\0\0\0").unwrap(), vec![0, 1]);
        assert_eq!(parse_mask("00000003\n\0").unwrap(), vec![0, 1]);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_list("a-b").is_err());
        assert!(parse_list("3-1").is_err());
        assert!(parse_mask("xyz").is_err());
        // Strict about everything but trailing NULs and whitespace.
        assert!(parse_list("0-3\0garbage").is_err());
        assert!(parse_list("0-3 7").is_err());
        // An empty item is refused, saying where it is.
        for (list, item, at) in [
            ("0,,1", 2, 3),
            ("0,1,", 3, 5),
            (",0", 1, 1),
            ("0, ,1", 2, 3),
        ] {
            let e = parse_list(list).unwrap_err();
            assert!(
                e.contains(&format!("empty item {item} (character {at})")),
                "{list}: {e}"
            );
        }
        assert!(parse_mask("0000000f,").is_err());
        assert!(parse_mask("1ffffffff").is_err());
    }

    #[test]
    fn parses_masks_across_words() {
        assert_eq!(parse_mask("0000000f").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_mask("00000001,00000003").unwrap(), vec![0, 1, 32]);
    }

    proptest! {
        #[test]
        fn garbage_never_panics(s in "\\PC{0,40}") {
            let _ = parse_list(&s);
            let _ = parse_mask(&s);
        }

        #[test]
        fn format_then_parse_round_trips(cpus in proptest::collection::btree_set(0u32..600, 0..80)) {
            let v: Vec<u32> = cpus.into_iter().collect();
            prop_assert_eq!(parse_list(&format_list(&v)).unwrap(), v);
        }
    }
}
