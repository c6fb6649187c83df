//! The user's labels on a run (`--tag KEY=VALUE`): the one rule for what a tag may be,
//! used by every measuring command, by `history --tag` and (as a pattern) by the schema
//! that `import` checks documents against.
//!
//! A key is 1 to 64 letters, digits and `_ . -`, starting with a letter or digit (so it
//! reads the same in `--by tag:KEY`, SQL paths and file names); a value is 1 to 256
//! characters without control characters (an inventory name, a group list, a ticket).

use std::collections::BTreeMap;

/// The tag of a run that holds only rounds added to another run by `compare --precision`
/// (its value: that run's id). Such a run is never a host's latest run (`compare
/// --latest-per-host`) nor part of its history: it holds a few rows of another run.
pub const ADDS_TO: &str = "adds-to";
pub const MAX_KEY: usize = 64;
pub const MAX_VALUE: usize = 256;
/// At most this many tags on one run.
pub const MAX_TAGS: usize = 64;

/// Whether `key` is a valid tag key.
pub fn valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && key.len() <= MAX_KEY
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// One `KEY=VALUE` (split at the first `=`), or why it is not one.
pub fn parse(s: &str) -> Result<(String, String), String> {
    let shown: String = s.chars().take(40).filter(|c| !c.is_control()).collect();
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!("'{shown}' is not KEY=VALUE (no '=')"));
    };
    if key.is_empty() {
        return Err(format!("'{shown}' has an empty key"));
    }
    if !valid_key(key) {
        return Err(format!(
            "key '{}' is not 1 to {MAX_KEY} letters, digits and _ . - starting with a letter or digit",
            key.chars().take(40).filter(|c| !c.is_control()).collect::<String>()
        ));
    }
    if value.is_empty() {
        return Err(format!("'{shown}' has an empty value"));
    }
    if value.chars().count() > MAX_VALUE {
        return Err(format!(
            "the value of '{key}' is longer than {MAX_VALUE} characters"
        ));
    }
    if !value.chars().all(crate::stdout::identifier_char) {
        return Err(format!(
            "the value of '{key}' holds a control character or a bidirectional control"
        ));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Tags given on the command line as a map: a key given twice, or too many tags, is
/// refused (the second value would silently win otherwise).
pub fn collect(given: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    if given.len() > MAX_TAGS {
        return Err(format!("{} tags given, at most {MAX_TAGS}", given.len()));
    }
    let mut map = BTreeMap::new();
    for (k, v) in given {
        if map.insert(k.clone(), v.clone()).is_some() {
            return Err(format!("key '{k}' is given twice"));
        }
    }
    Ok(map)
}

/// The tags as `k=v, k=v` for a table cell or a header.
pub fn text(tags: &BTreeMap<String, String>) -> String {
    tags.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_splits_at_the_first_equals_sign() {
        assert_eq!(
            parse("host=web-01").unwrap(),
            ("host".into(), "web-01".into())
        );
        assert_eq!(parse("q=a=b").unwrap(), ("q".into(), "a=b".into()));
        assert_eq!(parse("group=db,web").unwrap().1, "db,web");
    }

    #[test]
    fn malformed_tags_are_refused_with_their_reason() {
        assert!(parse("host").unwrap_err().contains("no '='"));
        assert!(parse("=x").unwrap_err().contains("empty key"));
        assert!(parse("host=").unwrap_err().contains("empty value"));
        assert!(parse("ho st=x").unwrap_err().contains("letters, digits"));
        assert!(parse("-k=x").unwrap_err().contains("starting with"));
        assert!(parse(&format!("{}=x", "k".repeat(65))).is_err());
        assert!(parse(&format!("k={}", "v".repeat(257)))
            .unwrap_err()
            .contains("longer"));
        assert!(parse("k=a\nb").unwrap_err().contains("control"));
        assert!(parse(&format!("k={}", "é".repeat(256))).is_ok());
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        let t = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert!(collect(&[t("a", "1"), t("a", "1")])
            .unwrap_err()
            .contains("'a' is given twice"));
        let ok = collect(&[t("b", "2"), t("a", "1")]).unwrap();
        assert_eq!(text(&ok), "a=1, b=2");
        let many: Vec<_> = (0..65).map(|i| t(&format!("k{i}"), "v")).collect();
        assert!(collect(&many).is_err());
    }
}
