//! `truebench import FILE... | DIR | -` with many documents: every file given, every
//! `*.json` and `*.ndjson` file of a directory (sorted by name), and standard input, each
//! holding one document or many (NDJSON, one per line; or pretty-printed documents one after
//! another), checked and stored in one process, one transaction per batch of `BATCH`. A
//! refused document (not JSON, not a valid run document, a run already stored or given
//! twice) is reported on standard error as `refused NAME: WHY` and the others are stored:
//! exit 0 when every document was stored, 2 when any was refused (after storing the good
//! ones). One document refused out of one gives the single-document error as before.

use crate::error::usage;
use crate::result::{RunDocument, MAX_DOCUMENT_BYTES};
use crate::store::{default_path, Location, Store};
use serde_json::Value;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Documents stored per transaction.
pub const BATCH: usize = 100;
/// Documents passed between the stages of an import at a time (read, checked, stored).
const CHUNK: usize = 50;
/// A stream of pretty-printed documents (not one per line) is read up to this size.
const MAX_STREAM_BYTES: u64 = 64 * MAX_DOCUMENT_BYTES as u64;

/// Where documents come from.
pub enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    fn name(&self) -> String {
        match self {
            Source::Stdin => "standard input".into(),
            Source::File(p) => p.display().to_string(),
        }
    }
}

/// The sources `args` name: files as given, a directory's `*.json` and `*.ndjson` files.
pub fn sources(args: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    let mut out = vec![];
    for a in args {
        if a.as_os_str() == super::output::STDIO {
            out.push(Source::Stdin);
        } else if a.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(a)
                .map_err(|e| usage(format!("cannot read the directory {}: {e}", a.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                // A directory inside is not walked, and said (it was skipped in silence:
                // "imported 200 runs" of 300).
                .filter(|p| {
                    let nested = std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
                        && !p.extension().is_some_and(|x| x == "json" || x == "ndjson");
                    if nested {
                        eprintln!(
                            "truebench: skipped {}: a directory inside {} (import it by name)",
                            crate::stdout::field(&p.display().to_string()),
                            crate::stdout::field(&a.display().to_string())
                        );
                    }
                    !nested
                })
                // By name only: a FIFO, a dangling link or a directory called *.json is
                // refused with its reason below, never skipped in silence.
                .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "ndjson"))
                .collect();
            if files.is_empty() {
                return Err(usage(format!(
                    "{} holds no *.json or *.ndjson file: nothing to import",
                    a.display()
                )));
            }
            files.sort();
            out.extend(files.into_iter().map(Source::File));
        } else {
            out.push(Source::File(a.clone()));
        }
    }
    Ok(out)
}

/// One document read from a source: its name and its JSON, or why it could not be read.
type Read1 = (String, Result<Value, String>);

/// Every document of one source, in order. Line mode (NDJSON) when the first non-blank line
/// is a whole JSON value or not JSON at all; otherwise one stream of documents.
fn documents(src: &Source, each: &mut dyn FnMut(Read1)) {
    let name = src.name();
    let reader: Box<dyn Read> = match src {
        Source::Stdin => Box::new(std::io::stdin()),
        Source::File(p) => match open_regular(p) {
            Ok(f) => Box::new(f),
            Err(why) => return each((name, Err(why))),
        },
    };
    let mut r = BufReader::new(reader);
    let mut line_no = 0;
    let mut buf = Vec::new();
    let mut seen = 0;
    loop {
        buf.clear();
        match (&mut r)
            .take(MAX_DOCUMENT_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return each((name.clone(), Err(format!("cannot read {name}: {e}")))),
        }
        line_no += 1;
        if buf.len() > MAX_DOCUMENT_BYTES {
            return each((
                format!("{name}:{line_no}"),
                Err(format!("a line holds more than {MAX_DOCUMENT_BYTES} bytes")),
            ));
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.strip_prefix('\u{feff}').unwrap_or(t),
            Err(_) => {
                each((format!("{name}:{line_no}"), Err("not UTF-8 text".into())));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        let here = if line_no == 1 {
            name.clone()
        } else {
            format!("{name}:{line_no}")
        };
        match serde_json::from_str::<Value>(text) {
            Ok(v) => each((here, Ok(v))),
            Err(e) if seen == 0 && e.classify() == serde_json::error::Category::Eof => {
                // A pretty-printed document: read the rest as a stream of documents, each
                // at most MAX_DOCUMENT_BYTES as a file is (the stream's own limit let one
                // 200 MB document through, parsed into several times its size).
                let start = std::rc::Rc::new(std::cell::Cell::new(0));
                let rest = PerDocument {
                    inner: std::io::Cursor::new(buf.clone()).chain(r.take(MAX_STREAM_BYTES)),
                    read: 0,
                    start: start.clone(),
                };
                let mut stream = serde_json::Deserializer::from_reader(rest).into_iter::<Value>();
                let mut k = 0;
                while let Some(v) = stream.next() {
                    start.set(stream.byte_offset() as u64);
                    k += 1;
                    let here = if k == 1 {
                        name.clone()
                    } else {
                        format!("{name} (document {k})")
                    };
                    match v {
                        Ok(v) => each((here, Ok(v))),
                        Err(e) if e.is_io() => return each((here, Err(e.to_string()))),
                        Err(e) => return each((here, Err(format!("is not valid JSON: {e}")))),
                    }
                }
                return;
            }
            Err(e) => each((here, Err(format!("is not valid JSON: {e}")))),
        }
        seen += 1;
    }
    if seen == 0 {
        each((name.clone(), Err("is empty: no document in it".into())));
    }
}

/// A stream of documents whose reads fail once the document being parsed (from `start`,
/// the end of the last one) holds more than MAX_DOCUMENT_BYTES: serde_json reads its input
/// byte by byte through the buffer below, so what was read is where the parser is.
struct PerDocument<R> {
    inner: R,
    read: u64,
    start: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for PerDocument<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read - self.start.get() > MAX_DOCUMENT_BYTES as u64 {
            return Err(std::io::Error::other(format!(
                "holds more than {MAX_DOCUMENT_BYTES} bytes (a document of a stream is \
                 read up to that size, as a file is)"
            )));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Open a named file for reading; anything but a regular file is refused. The open does
/// not block (a FIFO without a writer hung `import FIFO FILE` for ever).
fn open_regular(p: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let m = f.metadata().map_err(|e| format!("cannot read it: {e}"))?;
    if !m.is_file() {
        return Err("not a regular file (give files, a directory, or - for standard input)".into());
    }
    Ok(f)
}

/// What an import did.
#[derive(Default)]
struct Tally {
    stored: usize,
    results: usize,
    /// Each refused document: its name, why, and the kind of why
    /// (`crate::repeated::kind_of` unless the reason names a run).
    refused: Vec<Refusal>,
    last: Option<String>,
}

struct Refusal {
    name: String,
    why: String,
    kind: String,
}

impl Refusal {
    fn new(name: String, why: String) -> Refusal {
        let kind = crate::repeated::kind_of(&why);
        Refusal { name, why, kind }
    }
}

/// Why a run is refused for its id (given twice, already stored), and the kind of that
/// reason, which leaves the id out.
fn refused_run(id: &str, what: &str) -> (String, Option<String>) {
    (format!("run {id} {what}"), Some(format!("run {what}")))
}

/// Store a batch: the runs already in the store are refused (one query for the batch,
/// not one per run), the others stored in one transaction.
fn store_batch(store: &mut Store, batch: &mut Vec<(String, RunDocument)>, t: &mut Tally) {
    if batch.is_empty() {
        return;
    }
    let ids: Vec<&str> = batch.iter().map(|(_, d)| d.run_id.as_str()).collect();
    match store.stored(&ids) {
        Ok(there) if !there.is_empty() => {
            let there: HashSet<String> = there.into_iter().collect();
            let at = store.location().to_string();
            batch.retain(|(name, d)| {
                let keep = !there.contains(&d.run_id);
                if !keep {
                    let (why, kind) = refused_run(&d.run_id, &format!("is already in {at}"));
                    let mut r = Refusal::new(name.clone(), why);
                    r.kind = kind.unwrap_or(r.kind);
                    t.refused.push(r);
                }
                keep
            });
        }
        Ok(_) => {}
        Err(e) => {
            let why = format!("{e:#}");
            t.refused.extend(
                batch
                    .drain(..)
                    .map(|(name, _)| Refusal::new(name, why.clone())),
            );
        }
    }
    let docs: Vec<&RunDocument> = batch.iter().map(|(_, d)| d).collect();
    if store.insert_batch(&docs).is_ok() {
        t.stored += docs.len();
        t.results += docs.iter().map(|d| d.results.len()).sum::<usize>();
        t.last = docs.last().map(|d| d.run_id.clone());
    } else {
        // One at a time, to say which one failed.
        for (name, d) in batch.iter() {
            match store.insert(d) {
                Ok(()) => {
                    t.stored += 1;
                    t.results += d.results.len();
                    t.last = Some(d.run_id.clone());
                }
                Err(e) => t.refused.push(Refusal::new(name.clone(), format!("{e:#}"))),
            }
        }
    }
    batch.clear();
}

/// The identifiers of a document (its host, its tags) hold no control character and no
/// bidirectional control (`crate::stdout::identifier_char`): a host name with a line break
/// forged a line of `compare -v`, a right-to-left override reversed the text after it.
fn identifiers_plain(d: &RunDocument) -> Result<(), String> {
    let bad = |what: &str, s: &str| {
        match s.chars().find(|c| !crate::stdout::identifier_char(*c)) {
        Some(c) => Err(format!(
            "{what} '{}' holds {} (U+{:04X}): an identifier may hold no control or bidirectional character",
            crate::stdout::field(&s.chars().take(40).collect::<String>()),
            if c.is_control() { "a control character" } else { "a bidirectional control" },
            c as u32
        )),
        None => Ok(()),
    }
    };
    if let Some(h) = &d.host {
        bad("host", h)?;
    }
    for (k, v) in &d.tags {
        bad(&format!("tag {k}"), k)?;
        bad(&format!("tag {k}"), v)?;
    }
    Ok(())
}

/// A document to import, checked (the schema and its rules, its identity) and marked as
/// imported where that matters; or why it is refused. Every import goes through here. Keys
/// no field holds (a newer version's) are named on stderr: they are not stored.
pub fn admit(v: &Value, name: &str) -> Result<RunDocument, String> {
    let (mut d, lost) = crate::result::validate_kept(v)?;
    crate::store::check_identity(&d)?;
    crate::result::times::admit(&mut d, chrono::Utc::now())?;
    identifiers_plain(&d)?;
    // A calibration run measured elsewhere is not this host's noise: tagged with the time
    // of its import, so `compare` names it instead of resting on it
    // (`crate::store::calibration`).
    use crate::compare::stats::noise_model::CALIBRATION_TAG;
    use crate::store::calibration::IMPORTED_TAG;
    if d.tags.contains_key(CALIBRATION_TAG) {
        d.tags.insert(
            IMPORTED_TAG.into(),
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
    }
    if lost.dropped_count > 0 {
        let more = match lost.dropped_count - lost.dropped.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        eprintln!(
            "truebench: {}: not stored, as no field of {} holds them (a newer truebench's?): {}{more}",
            crate::stdout::field(name),
            crate::result::SCHEMA,
            lost.dropped
                .iter()
                .map(|p| crate::stdout::field(p))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    Ok(d)
}

pub fn import(args: &[PathBuf], db: Option<&Location>) -> anyhow::Result<()> {
    let sources = sources(args)?;
    let path = default_path(db)?;
    // The database is opened at the first document that passes its checks, so input that
    // holds none (empty, not JSON, all refused) creates nothing.
    let mut store: Option<Store> = None;
    let mut open_failed: Option<anyhow::Error> = None;
    let mut t = Tally::default();
    let mut ids: HashSet<String> = HashSet::new();
    let mut batch: Vec<(String, RunDocument)> = vec![];

    let mut total = 0;
    // Three stages at once: a thread reads and parses the sources, one checks the parsed
    // documents (on every CPU this process may use), this one stores them in order. The
    // channels hold a few chunks, so memory stays bounded; when this stage stops (the store
    // cannot be opened) the others stop at their next chunk.
    std::thread::scope(|s| {
        let (parsed_tx, parsed_rx) = std::sync::mpsc::sync_channel::<Vec<Read1>>(2);
        type Checked = Vec<(String, Result<RunDocument, String>)>;
        let (checked_tx, checked_rx) = std::sync::mpsc::sync_channel::<Checked>(2);
        let sources = &sources;
        s.spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            let mut stop = false;
            for src in sources {
                documents(src, &mut |read| {
                    if stop {
                        return;
                    }
                    chunk.push(read);
                    if chunk.len() >= CHUNK {
                        stop = parsed_tx.send(std::mem::take(&mut chunk)).is_err();
                    }
                });
                if stop {
                    return;
                }
            }
            let _ = parsed_tx.send(chunk);
        });
        s.spawn(move || {
            for chunk in parsed_rx {
                let checked = crate::parallel::map(&chunk, |(name, read)| {
                    read.as_ref()
                        .map_err(Clone::clone)
                        .and_then(|v| admit(v, name))
                });
                let named = chunk.into_iter().map(|(name, _)| name).zip(checked);
                if checked_tx.send(named.collect()).is_err() {
                    return;
                }
            }
        });
        for (name, checked) in checked_rx.into_iter().flatten() {
            if open_failed.is_some() {
                break;
            }
            total += 1;
            // Err: why, and its kind when the reason names a run (the kind leaves it out).
            let checked = checked.map_err(|why| (why, None));
            let checked = checked.and_then(|d| {
                if !ids.insert(d.run_id.clone()) {
                    return Err(refused_run(&d.run_id, "is given twice"));
                }
                if store.is_none() {
                    match Store::open_rw(&path) {
                        Ok(s) => store = Some(s),
                        Err(e) => {
                            open_failed = Some(e);
                            return Err((String::new(), None));
                        }
                    }
                }
                Ok(d)
            });
            match checked {
                Ok(d) => {
                    batch.push((name, d));
                    if batch.len() >= BATCH {
                        if let Some(store) = store.as_mut() {
                            store_batch(store, &mut batch, &mut t);
                        }
                    }
                }
                Err(_) if open_failed.is_some() => {}
                Err((why, kind)) => {
                    let mut r = Refusal::new(name, why);
                    r.kind = kind.unwrap_or(r.kind);
                    t.refused.push(r)
                }
            }
        }
    });
    if let Some(e) = open_failed {
        return Err(e);
    }
    if let Some(store) = store.as_mut() {
        store_batch(store, &mut batch, &mut t);
    }
    if total == 1 && t.refused.len() == 1 {
        let Refusal { name, why, .. } = &t.refused[0];
        return Err(match why.starts_with("is ") {
            true => usage(format!("{name} {why}")),
            false => usage(format!("{name} refused: {why}")),
        });
    }
    // The first few of each kind whole, the rest counted (100 KB of garbage on standard
    // input printed 401 lines; a full disk, one per remaining document).
    for line in crate::repeated::Repeated::lines(
        t.refused
            .iter()
            .map(|r| (r.kind.clone(), format!("refused {}: {}", r.name, r.why))),
    ) {
        eprintln!("{}", crate::stdout::printable(&line));
    }
    match (t.stored, &t.last) {
        (1, Some(id)) => crate::stdout::line(&format!(
            "imported run {id} ({}) into {}",
            crate::units::count(t.results, "result"),
            path.display()
        ))?,
        (n, _) => crate::stdout::line(&format!(
            "imported {} ({}) into {}",
            crate::units::count(n, "run"),
            crate::units::count(t.results, "result"),
            path.display()
        ))?,
    }
    if t.refused.is_empty() {
        Ok(())
    } else {
        Err(usage(format!(
            "{} of {} refused (listed above); the other {} {} stored",
            t.refused.len(),
            crate::units::count(total, "document"),
            t.stored,
            if t.stored == 1 { "is" } else { "are" }
        )))
    }
}
