//! The bandwidth kernels, written as explicit loops the compiler may not replace with
//! memcpy/memset (a compiler fence every 8 elements stops loop-idiom recognition, which
//! would hand Copy to libc and its own store policy), in a regular-store and, on x86-64, a
//! non-temporal-store form. Byte counting follows STREAM: program bytes, no write-allocate.

use std::sync::atomic::{compiler_fence, Ordering};

/// STREAM's scalar.
pub const SCALAR: f64 = 3.0;
/// The value Fill writes.
pub const FILL: f64 = 7.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Copy,
    Scale,
    Add,
    Triad,
    /// Read-only: sum of a.
    Sum,
    /// Write-only: c = FILL.
    Fill,
}

impl Kernel {
    /// Run order within a pass (STREAM's four, then the read and the write kernels).
    pub const ALL: [Kernel; 6] = [
        Kernel::Copy,
        Kernel::Scale,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Sum,
        Kernel::Fill,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
            Kernel::Sum => "sum",
            Kernel::Fill => "fill",
        }
    }

    /// Program bytes per element (STREAM counting: loads and stores named in the loop).
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale => 16,
            Kernel::Add | Kernel::Triad => 24,
            Kernel::Sum | Kernel::Fill => 8,
        }
    }

    /// Factor from program bytes to DRAM bytes with ordinary stores: each stored line is
    /// first read (write-allocate). Non-temporal stores skip that read.
    pub fn write_allocate_factor(self) -> f64 {
        match self {
            Kernel::Copy | Kernel::Scale => 1.5,
            Kernel::Add | Kernel::Triad => 4.0 / 3.0,
            Kernel::Sum => 1.0,
            Kernel::Fill => 2.0,
        }
    }

    pub fn stores(self) -> bool {
        self != Kernel::Sum
    }
}

/// Whether non-temporal store variants exist here.
pub const HAVE_NT: bool = cfg!(target_arch = "x86_64");

/// The arrays of one thread.
pub struct Arrays<'a> {
    pub a: &'a mut [f64],
    pub b: &'a mut [f64],
    pub c: &'a mut [f64],
}

/// Run `k` once over the arrays; returns the sum for `Sum` (0 otherwise). Non-temporal
/// stores where the target has them ([`HAVE_NT`]); elsewhere `nt` runs the regular loops, so
/// no caller can get arrays left unwritten.
pub fn run(k: Kernel, x: &mut Arrays, nt: bool) -> f64 {
    if nt && HAVE_NT && k.stores() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: x86-64 always has SSE2; arrays are page-aligned and a multiple of 8 long.
        unsafe {
            nt::run(k, x);
        }
        return 0.0;
    }
    regular(k, x)
}

/// The regular-store loops.
fn regular(k: Kernel, x: &mut Arrays) -> f64 {
    match k {
        Kernel::Copy => chunked2(x.a, x.c, |a, _| a),
        Kernel::Scale => chunked2(x.c, x.b, |c, _| SCALAR * c),
        Kernel::Add => chunked3(x.a, x.b, x.c, |a, b| a + b),
        Kernel::Triad => chunked3(x.b, x.c, x.a, |b, c| b + SCALAR * c),
        Kernel::Fill => {
            for chunk in x.c.chunks_exact_mut(8) {
                for v in chunk.iter_mut() {
                    *v = FILL;
                }
                compiler_fence(Ordering::SeqCst);
            }
        }
        Kernel::Sum => {
            let mut acc = [0.0f64; 8];
            for chunk in x.a.chunks_exact(8) {
                for j in 0..8 {
                    acc[j] += chunk[j];
                }
            }
            return std::hint::black_box(acc.iter().sum());
        }
    }
    0.0
}

/// dst[i] = f(src[i], dst[i]) in chunks of 8 with a compiler fence per chunk.
#[inline(always)]
fn chunked2(src: &[f64], dst: &mut [f64], f: impl Fn(f64, f64) -> f64) {
    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
        for j in 0..8 {
            d[j] = f(s[j], d[j]);
        }
        compiler_fence(Ordering::SeqCst);
    }
}

/// dst[i] = f(x[i], y[i]) in chunks of 8 with a compiler fence per chunk.
#[inline(always)]
fn chunked3(x: &[f64], y: &[f64], dst: &mut [f64], f: impl Fn(f64, f64) -> f64) {
    for ((d, a), b) in dst
        .chunks_exact_mut(8)
        .zip(x.chunks_exact(8))
        .zip(y.chunks_exact(8))
    {
        for j in 0..8 {
            d[j] = f(a[j], b[j]);
        }
        compiler_fence(Ordering::SeqCst);
    }
}

#[cfg(target_arch = "x86_64")]
mod nt {
    use super::*;
    use core::arch::x86_64::*;

    /// Non-temporal variants: 16-byte streaming stores (movntpd), then a store fence.
    pub unsafe fn run(k: Kernel, x: &mut Arrays) {
        let n = x.c.len();
        let (a, b, c) = (x.a.as_mut_ptr(), x.b.as_mut_ptr(), x.c.as_mut_ptr());
        let s = _mm_set1_pd(SCALAR);
        let mut i = 0;
        while i < n {
            match k {
                Kernel::Copy => _mm_stream_pd(c.add(i), _mm_load_pd(a.add(i))),
                Kernel::Scale => _mm_stream_pd(b.add(i), _mm_mul_pd(s, _mm_load_pd(c.add(i)))),
                Kernel::Add => _mm_stream_pd(
                    c.add(i),
                    _mm_add_pd(_mm_load_pd(a.add(i)), _mm_load_pd(b.add(i))),
                ),
                Kernel::Triad => _mm_stream_pd(
                    a.add(i),
                    _mm_add_pd(_mm_load_pd(b.add(i)), _mm_mul_pd(s, _mm_load_pd(c.add(i)))),
                ),
                Kernel::Fill => _mm_stream_pd(c.add(i), _mm_set1_pd(FILL)),
                Kernel::Sum => unreachable!("Sum stores nothing"),
            }
            i += 2;
        }
        _mm_sfence();
    }
}

/// The values a, b, c hold after `passes` passes from a=1, b=2, c=0 (STREAM's recurrence,
/// then Fill), to validate the arrays like STREAM does.
pub fn expected(passes: usize) -> (f64, f64, f64) {
    let (mut a, mut b, mut c) = (1.0f64, 2.0f64, 0.0f64);
    for _ in 0..passes {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
        c = FILL;
    }
    (a, b, c)
}

/// Average relative error of `v` against `want` over the array (STREAM's check).
pub fn relative_error(v: &[f64], want: f64) -> f64 {
    let sum: f64 = v.iter().map(|x| (x - want).abs()).sum();
    sum / v.len() as f64 / want.abs().max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays(n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        (vec![1.0; n], vec![2.0; n], vec![0.0; n])
    }

    #[test]
    fn byte_counting_follows_stream() {
        let b: Vec<u64> = Kernel::ALL.iter().map(|k| k.bytes_per_element()).collect();
        assert_eq!(b, vec![16, 16, 24, 24, 8, 8]);
        assert_eq!(Kernel::Triad.write_allocate_factor(), 4.0 / 3.0);
    }

    #[test]
    fn passes_reproduce_the_recurrence_in_both_store_forms() {
        // Without non-temporal stores (not x86-64), nt runs the regular loops: still right.
        for nt in [false, true] {
            let (mut a, mut b, mut c) = arrays(64);
            let mut sums = Vec::new();
            for _ in 0..3 {
                let mut x = Arrays {
                    a: &mut a,
                    b: &mut b,
                    c: &mut c,
                };
                for k in Kernel::ALL {
                    let s = run(k, &mut x, nt);
                    if k == Kernel::Sum {
                        sums.push(s);
                    }
                }
            }
            let (ea, eb, ec) = expected(3);
            assert!(
                relative_error(&a, ea) < 1e-13,
                "nt={nt}: a {} vs {ea}",
                a[0]
            );
            assert!(
                relative_error(&b, eb) < 1e-13,
                "nt={nt}: b {} vs {eb}",
                b[0]
            );
            assert!(relative_error(&c, ec) < 1e-13, "nt={nt}: c");
            // Sum of pass 1 sees a after one triad: 64 * expected(1).0.
            assert_eq!(sums[0], 64.0 * expected(1).0);
        }
    }

    #[test]
    fn expected_values_of_one_pass() {
        // c=1, b=3, c=4, a=3+12=15, then Fill.
        assert_eq!(expected(1), (15.0, 3.0, FILL));
    }
}
