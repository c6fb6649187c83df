//! Pure work over many items on every CPU this process may use: decoding and checking
//! thousands of stored or imported documents (`import DIR`, the fleet view) is CPU-bound
//! and independent per document. Results come back in the items' order.

/// The threads to use: the CPUs this process may run on (its affinity and cgroup quota, as
/// `std::thread::available_parallelism` reads them), at most 8.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// `f` of every item, in order, the items split in contiguous parts across [`threads`]
/// (one part, on this thread, for a single CPU or a handful of items).
pub fn map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let n = threads().min(items.len().div_ceil(8)).max(1);
    if n == 1 {
        return items.iter().map(f).collect();
    }
    let part = items.len().div_ceil(n);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(part)
            .map(|c| s.spawn(move || c.iter().map(f).collect::<Vec<U>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_the_items_order_whatever_the_split() {
        for n in [0, 1, 7, 8, 9, 100, 1001] {
            let items: Vec<usize> = (0..n).collect();
            assert_eq!(
                super::map(&items, |x| x * 2),
                (0..n).map(|x| x * 2).collect::<Vec<_>>()
            );
        }
        assert!(super::threads() >= 1);
    }
}
