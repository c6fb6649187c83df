//! Double-precision Whetstone (Curnow and Wichmann, 1976), written in Rust from the
//! published algorithm: the eight timed modules (array elements, array as parameter,
//! conditional jumps, integer arithmetic, trigonometric functions, procedure calls, array
//! references, standard functions) with their loop weights 12, 14, 345, 210, 32, 899, 616
//! and 93 per tenth of a million Whetstone instructions. One `unit` is one million
//! Whetstone instructions (loop multiplier 10), so units per second are MWIPS. Constants
//! enter through `black_box`, so the compiler cannot fold a module into its answer; the
//! answers are checked against closed forms in the tests.

use std::hint::black_box;

/// Loop weights of the eight modules, per loop multiplier.
const WEIGHTS: [u32; 8] = [12, 14, 345, 210, 32, 899, 616, 93];
/// The loop multiplier of one million Whetstone instructions.
const PER_MWI: u32 = 10;

/// Each module's result after one unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Results {
    pub array_elements: [f64; 4],
    pub array_parameter: [f64; 4],
    pub conditional_jumps: i64,
    pub integer_arithmetic: [i64; 3],
    pub trigonometry: [f64; 2],
    pub procedure_calls: f64,
    pub array_references: [f64; 3],
    pub standard_functions: f64,
}

fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

fn p3(x: f64, y: f64, t: f64, t2: f64) -> f64 {
    let x1 = t * (x + y);
    let y1 = t * (x1 + y);
    (x1 + y1) / t2
}

fn p0(e: &mut [f64; 3], j: usize, k: usize, l: usize) {
    e[j] = e[k];
    e[k] = e[l];
    e[l] = e[j];
}

/// One million Whetstone instructions.
pub fn unit() -> Results {
    let t = black_box(0.499975f64);
    let t1 = black_box(0.50025f64);
    let t2 = black_box(2.0f64);
    let n = |m: usize| WEIGHTS[m] * PER_MWI;

    let mut e1 = black_box([1.0f64, -1.0, -1.0, -1.0]);
    for _ in 0..n(0) {
        e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
        e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
        e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
        e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
    }
    let array_elements = e1;

    let mut e2 = black_box([1.0f64, -1.0, -1.0, -1.0]);
    for _ in 0..n(1) {
        pa(&mut e2, t, t2);
    }

    let mut j: i64 = black_box(1);
    for _ in 0..n(2) {
        j = if j == 1 { 2 } else { 3 };
        j = if j > 2 { 0 } else { 1 };
        j = if j < 1 { 1 } else { 0 };
    }
    let conditional_jumps = j;

    let (mut j, mut k, mut l): (i64, i64, i64) = black_box((1, 2, 3));
    let mut e4 = [0.0f64; 4];
    for _ in 0..n(3) {
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
        x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
    }
    let trigonometry = [x, y];

    let (x, y) = black_box((1.0f64, 1.0f64));
    let mut z = 0.0;
    for _ in 0..n(5) {
        z = black_box(p3(x, y, t, t2));
    }
    let procedure_calls = z;

    let mut e7 = black_box([1.0f64, 2.0, 3.0]);
    let (j, k, l) = black_box((0usize, 1usize, 2usize));
    for _ in 0..n(6) {
        p0(&mut e7, j, k, l);
    }

    let mut x = black_box(0.75f64);
    for _ in 0..n(7) {
        x = (x.ln() / t1).exp().sqrt();
    }

    black_box(Results {
        array_elements,
        array_parameter: e2,
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

    #[test]
    fn modules_end_on_their_closed_forms() {
        let r = unit();
        // Conditional jumps alternate j between 0 and 1; 3450 passes end on 1.
        assert_eq!(r.conditional_jumps, 1);
        // Integer arithmetic: (1, 2, 3) is a fixed point of its three assignments.
        assert_eq!(r.integer_arithmetic, [1, 2, 3]);
        // Procedure calls: x = y = 1, so z = (2t + t(2t + 1)) / 2.
        let t = 0.499975f64;
        assert!((r.procedure_calls - (2.0 * t + t * (2.0 * t + 1.0)) / 2.0).abs() < 1e-15);
        // Standard functions: ln x shrinks by 1/(2 t1) each pass: ln x_n = ln 0.75 · (1/(2 t1))^n.
        let want = (0.75f64.ln() * (1.0 / (2.0 * 0.50025f64)).powi(930)).exp();
        assert!(
            (r.standard_functions - want).abs() < 1e-9,
            "{}",
            r.standard_functions
        );
        // Array references cycle with period 2 from [1, 2, 3]: [2, 3, 2], [3, 2, 3], ...;
        // 6160 passes end on [3, 2, 3].
        assert_eq!(r.array_references, [3.0, 2.0, 3.0]);
        // t = 0.499975 is chosen so the array modules neither overflow nor vanish: they
        // settle near (-0.07, -0.46, -0.73, -1.12) and (-0.05, -0.45, -0.71, -1.11).
        let near =
            |got: [f64; 4], want: [f64; 4]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 0.01);
        assert!(
            near(r.array_elements, [-0.068, -0.463, -0.730, -1.124]),
            "{r:?}"
        );
        assert!(
            near(r.array_parameter, [-0.054, -0.451, -0.715, -1.112]),
            "{r:?}"
        );
        // The trigonometric module stays just under its start of 0.5.
        assert!(
            r.trigonometry.iter().all(|v| (0.48..0.5).contains(v)),
            "{r:?}"
        );
        // Every unit gives the same answers.
        assert_eq!(unit(), r);
    }
}
