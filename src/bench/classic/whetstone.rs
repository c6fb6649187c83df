//! Double-precision Whetstone, written in Rust from the published algorithm in its revised
//! form (Curnow and Wichmann, 1976; revised by Longbottom, 1987 and 1996), the form
//! UnixBench's `whetstone-double` runs: the eight timed modules (array elements, array as
//! parameter, conditional jumps, integer arithmetic, trigonometric functions, procedure
//! calls, array references, standard functions) with their loop weights 12, 14, 345, 210,
//! 32, 899, 616 and 93 per tenth of a million Whetstone instructions, and the revision's
//! constants T = 0.49999975, T1 = 0.50000025. One `unit` is one million Whetstone
//! instructions (loop multiplier 10), so units per second are MWIPS.
//!
//! The revision matters for speed, not only for the answers: its procedure-call module
//! carries Y and Z from one call to the next, so every call depends on the one before. In
//! the 1976 form the call's inputs never change, and a compiler computes it once, leaving
//! a loop that only stores that answer (version 1 of this test did exactly that: 40% of the
//! loop passes measured nothing; docs/peers.md has the measurement).
//!
//! Each module's starting state enters through `black_box`, so the compiler cannot compute
//! a module's answer ahead of time; the constants T, T1 and T2 are plain constants, as in
//! the published source, so the compiler may use them as a C compiler does (dividing by
//! T2 = 2 as multiplying by 0.5 gives the same bits). The answers are checked against
//! closed forms in the tests.
//!
//! Two sets of work. `Modules::All` runs every module as written. `Modules::AsUnixBench`
//! does the work UnixBench's own binary does (its whets.c built by its Makefile with gcc
//! -O3 -ffast-math; docs/peers.md has the instruction counts per module), so its MWIPS set
//! beside UnixBench's compare the same work: gcc proves that the integer module starts on a
//! fixed point of its assignments and deletes its loop, keeps the array-reference module's
//! three elements in registers (a register cycle, not loads and stores), and under
//! -ffast-math turns the standard-functions module's sqrt(exp(ln(x) / T1)) into
//! exp(ln(x) · 0.5 / T1). The classic index uses `AsUnixBench`; `All` is kept beside it.

use std::hint::black_box;

/// Which work a unit does (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modules {
    AsUnixBench,
    All,
}

impl Modules {
    /// Its `params.work` value.
    pub fn param(self) -> &'static str {
        match self {
            Modules::AsUnixBench => "unixbench",
            Modules::All => "all-modules",
        }
    }
}

/// Loop weights of the eight modules, per loop multiplier.
const WEIGHTS: [u32; 8] = [12, 14, 345, 210, 32, 899, 616, 93];
/// The loop multiplier of one million Whetstone instructions.
const PER_MWI: u32 = 10;
/// The revision's constants (the 1976 values 0.499975 and 0.50025 moved closer to 1/2).
const T: f64 = 0.49999975;
const T1: f64 = 0.50000025;
const T2: f64 = 2.0;

/// Each module's result after one unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Results {
    pub array_elements: [f64; 4],
    pub array_parameter: [f64; 4],
    pub conditional_jumps: i64,
    pub integer_arithmetic: [i64; 3],
    pub trigonometry: [f64; 2],
    /// Y and Z of the procedure-call module.
    pub procedure_calls: [f64; 2],
    pub array_references: [f64; 3],
    pub standard_functions: f64,
}

/// One pass of the array-elements module: four elements updated in turn.
fn array_step(e: &mut [f64; 4]) {
    e[0] = (e[0] + e[1] + e[2] - e[3]) * T;
    e[1] = (e[0] + e[1] - e[2] + e[3]) * T;
    e[2] = (e[0] - e[1] + e[2] + e[3]) * T;
    e[3] = (-e[0] + e[1] + e[2] + e[3]) * T;
}

/// The array-as-parameter procedure: six passes, the last element divided by T2.
fn pa(e: &mut [f64; 4]) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * T;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * T;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * T;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / T2;
    }
}

/// The revised procedure P3: X takes Y, Y takes Z, then X, Y and Z are recomputed, so the
/// next call starts from this one's Y and Z.
fn p3(x: &mut f64, y: &mut f64, z: &mut f64) {
    *x = *y;
    *y = *z;
    *x = T * (*x + *y);
    *y = T1 * (*x + *y);
    *z = (*x + *y) / T2;
}

/// The array-reference procedure P0: three assignments between elements `j`, `k`, `l`.
fn p0(e: &mut [f64; 3], j: usize, k: usize, l: usize) {
    e[j] = e[k];
    e[k] = e[l];
    e[l] = e[j];
}

/// The array-reference module as gcc compiles UnixBench's: the three elements stay in
/// registers and each pass is a cycle of register moves (e[j] = e[k]; e[k] = e[l];
/// e[l] = e[j]). An empty `asm!` makes the values opaque after every pass, in registers,
/// so LLVM cannot fold the cycle's period of 2 and drop the loop, as it otherwise does.
fn register_cycle(e: [f64; 3], passes: u32) -> [f64; 3] {
    let [mut a, mut b, mut c] = e;
    for _ in 0..passes {
        a = b;
        b = c;
        c = a;
        opaque(&mut a, &mut b, &mut c);
    }
    [a, b, c]
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn opaque(a: &mut f64, b: &mut f64, c: &mut f64) {
    // SAFETY: an empty instruction sequence that only claims to change three registers.
    unsafe {
        std::arch::asm!(
            "/* {0} {1} {2} */",
            inout(xmm_reg) * a,
            inout(xmm_reg) * b,
            inout(xmm_reg) * c,
            options(nomem, nostack, preserves_flags)
        );
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn opaque(a: &mut f64, b: &mut f64, c: &mut f64) {
    // SAFETY: an empty instruction sequence that only claims to change three registers.
    unsafe {
        std::arch::asm!(
            "/* {0:d} {1:d} {2:d} */",
            inout(vreg) * a,
            inout(vreg) * b,
            inout(vreg) * c,
            options(nomem, nostack, preserves_flags)
        );
    }
}

/// Elsewhere through memory (a store and a load per value and pass).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn opaque(a: &mut f64, b: &mut f64, c: &mut f64) {
    (*a, *b, *c) = black_box((*a, *b, *c));
}

/// An integer the compiler must take as unknown from here on, left in its register (the
/// conditional-jump module: LLVM otherwise computes its 3,450 passes' answer, which alternates
/// between 0 and 1, without running them; gcc runs them).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn opaque_int(j: &mut i64) {
    // SAFETY: an empty instruction sequence that only claims to change one register.
    unsafe {
        std::arch::asm!(
            "/* {0} */",
            inout(reg) * j,
            options(nomem, nostack, preserves_flags)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn opaque_int(j: &mut i64) {
    *j = black_box(*j);
}

/// One million Whetstone instructions of the given work.
pub fn unit(modules: Modules) -> Results {
    let n = |m: usize| WEIGHTS[m] * PER_MWI;

    let mut e1 = black_box([1.0f64, -1.0, -1.0, -1.0]);
    for _ in 0..n(0) {
        array_step(&mut e1);
    }
    let array_elements = e1;

    // The array-as-parameter module goes on from where the first left the array.
    for _ in 0..n(1) {
        pa(&mut e1);
    }
    let array_parameter = e1;

    let mut j: i64 = black_box(1);
    for _ in 0..n(2) {
        j = if j == 1 { 2 } else { 3 };
        j = if j > 2 { 0 } else { 1 };
        j = if j < 1 { 1 } else { 0 };
        opaque_int(&mut j);
    }
    let conditional_jumps = j;

    let (mut j, mut k, mut l): (i64, i64, i64) = black_box((1, 2, 3));
    let mut e4 = [0.0f64; 4];
    // UnixBench's binary: none (gcc deleted the loop of a fixed point).
    let passes = match modules {
        Modules::AsUnixBench => 0,
        Modules::All => n(3),
    };
    for _ in 0..passes {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        e4[(l - 2) as usize & 3] = (j + k + l) as f64;
        e4[(k - 2) as usize & 3] = (j * k * l) as f64;
    }
    black_box(e4);
    let integer_arithmetic = [j, k, l];

    let (mut x, mut y) = black_box((0.5f64, 0.5f64));
    for _ in 0..n(4) {
        x = T * (T2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = T * (T2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
    }
    let trigonometry = [x, y];

    let (mut x, mut y, mut z) = black_box((1.0f64, 1.0f64, 1.0f64));
    for _ in 0..n(5) {
        p3(&mut x, &mut y, &mut z);
    }
    let procedure_calls = [y, z];

    // The published indices 1, 2, 3 (0, 1, 2 here) enter through `black_box` too: with
    // them known, LLVM sees the array cycle with period 2 and drops the module's loop.
    let mut e7 = black_box([1.0f64, 2.0, 3.0]);
    match modules {
        Modules::AsUnixBench => e7 = register_cycle(e7, n(6)),
        Modules::All => {
            let (j, k, l) = black_box((0usize, 1usize, 2usize));
            for _ in 0..n(6) {
                p0(&mut e7, j, k, l);
            }
        }
    }

    let mut x = black_box(0.75f64);
    match modules {
        // -ffast-math's form: sqrt(exp(y)) = exp(y / 2), and the divide a multiply.
        Modules::AsUnixBench => {
            for _ in 0..n(7) {
                x = (x.ln() * (0.5 / T1)).exp();
            }
        }
        Modules::All => {
            for _ in 0..n(7) {
                x = (x.ln() / T1).exp().sqrt();
            }
        }
    }

    black_box(Results {
        array_elements,
        array_parameter,
        conditional_jumps,
        integer_arithmetic,
        trigonometry,
        procedure_calls,
        array_references: e7,
        standard_functions: x,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    type M = Vec<Vec<f64>>;

    fn mul(a: &M, b: &M) -> M {
        let n = a.len();
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (0..n).map(|k| a[i][k] * b[k][j]).sum())
                    .collect()
            })
            .collect()
    }

    fn identity(n: usize) -> M {
        (0..n)
            .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
            .collect()
    }

    /// `a` to the power `p`, by repeated squaring (a different order of rounding from the
    /// module's pass-by-pass loop).
    fn power(a: &M, mut p: u32) -> M {
        let (mut acc, mut sq) = (identity(a.len()), a.clone());
        while p > 0 {
            if p & 1 == 1 {
                acc = mul(&acc, &sq);
            }
            sq = mul(&sq, &sq);
            p >>= 1;
        }
        acc
    }

    fn apply(a: &M, v: &[f64]) -> Vec<f64> {
        a.iter()
            .map(|row| row.iter().zip(v).map(|(r, x)| r * x).sum())
            .collect()
    }

    /// The matrix of "element `i` becomes `coef` · the given signed sum of the elements".
    fn row_update(i: usize, signs: [f64; 4], coef: f64) -> M {
        let mut m = identity(4);
        m[i] = signs.iter().map(|s| s * coef).collect();
        m
    }

    /// One pass of the array modules as a matrix: four row updates, applied in turn.
    fn array_pass(last: f64) -> M {
        let rows = [
            row_update(0, [1.0, 1.0, 1.0, -1.0], T),
            row_update(1, [1.0, 1.0, -1.0, 1.0], T),
            row_update(2, [1.0, -1.0, 1.0, 1.0], T),
            row_update(3, [-1.0, 1.0, 1.0, 1.0], last),
        ];
        rows.iter().fold(identity(4), |acc, r| mul(r, &acc))
    }

    fn close(got: &[f64], want: &[f64], tol: f64) -> bool {
        got.iter().zip(want).all(|(g, w)| (g - w).abs() <= tol)
    }

    #[test]
    fn modules_end_on_their_closed_forms() {
        for modules in [Modules::All, Modules::AsUnixBench] {
            closed_forms(modules);
        }
    }

    /// The two sets of work end on the same answers (the fast-math form of the standard
    /// functions within rounding), and only the integer module's passes differ in count.
    #[test]
    fn the_unixbench_work_gives_the_same_answers() {
        let (a, u) = (unit(Modules::All), unit(Modules::AsUnixBench));
        assert_eq!(a.integer_arithmetic, u.integer_arithmetic);
        assert_eq!(a.array_references, u.array_references);
        assert_eq!(a.procedure_calls, u.procedure_calls);
        assert!((a.standard_functions - u.standard_functions).abs() < 1e-12);
        assert_eq!(Modules::AsUnixBench.param(), "unixbench");
        assert_eq!(Modules::All.param(), "all-modules");
    }

    fn closed_forms(modules: Modules) {
        let r = unit(modules);
        // Array elements: 120 passes of a linear map from (1, -1, -1, -1).
        let a1 = power(&array_pass(T), n(0));
        let want1 = apply(&a1, &[1.0, -1.0, -1.0, -1.0]);
        assert!(close(&r.array_elements, &want1, 1e-12), "{r:?} {want1:?}");
        // Array as parameter: 6 passes (last element divided by T2) per call, 140 calls,
        // going on from the first module's array.
        let a2 = power(&array_pass(1.0 / T2), 6 * n(1));
        let want2 = apply(&a2, &want1);
        assert!(close(&r.array_parameter, &want2, 1e-12), "{r:?} {want2:?}");
        // Neither vanishes nor overflows: they stay near (-0.1, -0.5, -0.7, -1.1).
        assert!(
            close(&r.array_parameter, &[-0.05, -0.45, -0.71, -1.11], 0.05),
            "{r:?}"
        );
        // Conditional jumps alternate j between 0 and 1; 3450 passes end on 1.
        assert_eq!(r.conditional_jumps, 1);
        // Integer arithmetic: (1, 2, 3) is a fixed point of its three assignments.
        assert_eq!(r.integer_arithmetic, [1, 2, 3]);
        // Procedure calls: (Y, Z) goes through a linear map each call, X = T (Y + Z),
        // Y' = T1 (X + Z), Z' = (X + Y') / T2; 8990 calls from (1, 1).
        let p = vec![
            vec![T1 * T, T1 * (T + 1.0)],
            vec![T * (1.0 + T1) / T2, (T + T1 * T + T1) / T2],
        ];
        let want6 = apply(&power(&p, n(5)), &[1.0, 1.0]);
        assert!(close(&r.procedure_calls, &want6, 1e-12), "{r:?} {want6:?}");
        // (The number of calls barely shows: the map's main eigenvalue is 1 - 1.1e-13, so
        // Y and Z settle near (1.0000002, 0.9999999) after the first few calls.)
        // Each call depends on the one before: the answer is not one call's.
        assert!((r.procedure_calls[1] - (T + T1 * (T + 1.0) + T) / T2).abs() > 1e-9);
        // Standard functions: ln x shrinks by 1/(2 T1) each pass: ln x_n = ln 0.75 · (1/(2 T1))^n.
        let want8 = (0.75f64.ln() * (1.0 / (2.0 * T1)).powi(n(7) as i32)).exp();
        assert!(
            (r.standard_functions - want8).abs() < 1e-12,
            "{}",
            r.standard_functions
        );
        // Array references cycle with period 2 from [1, 2, 3]: [2, 3, 2], [3, 2, 3], ...;
        // 6160 passes end on [3, 2, 3].
        assert_eq!(r.array_references, [3.0, 2.0, 3.0]);
        // The trigonometric module stays just under its start of 0.5.
        assert!(
            r.trigonometry.iter().all(|v| (0.49..0.5).contains(v)),
            "{r:?}"
        );
        // Every unit gives the same answers.
        assert_eq!(unit(modules), r);
    }

    fn n(m: usize) -> u32 {
        WEIGHTS[m] * PER_MWI
    }
}
