//! What of a URL a message may quote: never its user information's password, nor its
//! query or fragment (where a password may also hide). One place for every error, log
//! line and report that shows a URL given by the user (`--db`, `TRUEBENCH_DB`, `--http`).
//!
//! A malformed URL is the case that matters: a password holding an unencoded `@`, `/`,
//! `?` or `#` makes the user information end anywhere. So everything before the last `@`
//! is taken as user information, and only the user name (up to its first `:`) is kept.

/// `url` fit for a message: `scheme://user@host[:port]/path`, without the password, the
/// query and the fragment; control characters removed.
pub fn url(url: &str) -> String {
    let clean: String = url.chars().filter(|c| !c.is_control()).collect();
    let Some((scheme, rest)) = clean.split_once("://") else {
        // No authority: nothing in it can be a password, but a query may hold one.
        return without_query(&clean).to_string();
    };
    let (user, place) = match rest.rsplit_once('@') {
        Some((info, place)) => {
            let user = info
                .split([':', '@', '/', '?', '#'])
                .next()
                .unwrap_or_default();
            (Some(user), place)
        }
        None => (None, rest),
    };
    let place = without_query(place);
    match user {
        Some(u) => format!("{scheme}://{u}@{place}"),
        None => format!("{scheme}://{place}"),
    }
}

fn without_query(s: &str) -> &str {
    s.split(['?', '#']).next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_part_of_a_password_survives_whatever_it_holds() {
        let secret = "Zq9";
        for (given, shown) in [
            (
                "postgresql://ann:Zq9secret@db/bench",
                "postgresql://ann@db/bench",
            ),
            (
                "postgresql://ann:Zq9@sec@db/bench",
                "postgresql://ann@db/bench",
            ),
            (
                "postgresql://ann:Zq9/se?c#r@db:5433/bench",
                "postgresql://ann@db:5433/bench",
            ),
            (
                "postgresql://ann:Zq9:x@db/b?sslmode=require",
                "postgresql://ann@db/b",
            ),
            (
                "postgresql://ann@db/bench?password=Zq9",
                "postgresql://ann@db/bench",
            ),
            (
                "postgresql://ann@db/bench?sslrootcert=/a@Zq9",
                "postgresql://ann@Zq9",
            ),
            (
                "http://u:Zq9@127.0.0.1:8080/x?y",
                "http://u@127.0.0.1:8080/x",
            ),
            ("mysql://ann:Zq9\nsecret@db/bench", "mysql://ann@db/bench"),
            ("http://127.0.0.1:8080/path", "http://127.0.0.1:8080/path"),
            ("not a url?Zq9", "not a url"),
        ] {
            let got = url(given);
            if !shown.contains(secret) {
                assert!(!got.contains(secret), "{given}: {got}");
            }
            assert_eq!(got, shown, "{given}");
        }
    }
}
