//! Dhrystone 2.1 (Weicker, 1988), written in Rust from the published algorithm: records
//! copied by value, string assignment and comparison, an enumeration, procedure calls with
//! reference parameters and array indexing. One loop is one pass of the main loop; the
//! state persists across loops, so the published "should be" values at the end of a run
//! prove the work was done (the loop count shows in `arr_2[8][7]`).

use std::hint::black_box;

type Str30 = [u8; 31];

fn s30(text: &str) -> Str30 {
    let mut s = [0u8; 31];
    s[..text.len()].copy_from_slice(text.as_bytes());
    s
}

/// The enumeration Dhrystone declares (Ident_1..Ident_5); the fifth is matched, never made.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ident {
    One,
    Two,
    Three,
    Four,
    Five,
}

#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// Index of the record this one points to.
    pub ptr_comp: usize,
    pub discr: Ident,
    pub enum_comp: Ident,
    pub int_comp: i32,
    pub str_comp: Str30,
}

/// Globals and the locals that outlive a loop (Str_1_Loc and the final values).
pub struct Dhrystone {
    pub int_glob: i32,
    pub bool_glob: bool,
    pub ch_1_glob: u8,
    pub ch_2_glob: u8,
    pub arr_1: [i32; 50],
    pub arr_2: Box<[[i32; 50]; 50]>,
    /// recs[PTR_GLOB] and recs[NEXT_PTR_GLOB].
    pub recs: [Record; 2],
    pub str_1_loc: Str30,
    pub str_2_loc: Str30,
    pub int_1_loc: i32,
    pub int_2_loc: i32,
    pub int_3_loc: i32,
    pub enum_loc: Ident,
    /// Main-loop passes done.
    pub runs: u64,
}

const PTR_GLOB: usize = 0;
const NEXT_PTR_GLOB: usize = 1;

impl Default for Dhrystone {
    fn default() -> Self {
        Self::new()
    }
}

impl Dhrystone {
    pub fn new() -> Dhrystone {
        let glob = Record {
            ptr_comp: NEXT_PTR_GLOB,
            discr: Ident::One,
            enum_comp: Ident::Three,
            int_comp: 40,
            str_comp: s30("DHRYSTONE PROGRAM, SOME STRING"),
        };
        let mut arr_2 = Box::new([[0i32; 50]; 50]);
        arr_2[8][7] = 10;
        Dhrystone {
            int_glob: 0,
            bool_glob: false,
            ch_1_glob: 0,
            ch_2_glob: 0,
            arr_1: [0; 50],
            arr_2,
            recs: [
                glob,
                Record {
                    ptr_comp: 0,
                    discr: Ident::One,
                    enum_comp: Ident::One,
                    int_comp: 0,
                    str_comp: [0; 31],
                },
            ],
            str_1_loc: s30("DHRYSTONE PROGRAM, 1'ST STRING"),
            str_2_loc: [0; 31],
            int_1_loc: 0,
            int_2_loc: 0,
            int_3_loc: 0,
            enum_loc: Ident::One,
            runs: 0,
        }
    }

    /// Run `n` passes of the main loop.
    pub fn run(&mut self, n: u64) {
        let str_2nd = black_box(s30("DHRYSTONE PROGRAM, 2'ND STRING"));
        let str_3rd = black_box(s30("DHRYSTONE PROGRAM, 3'RD STRING"));
        for _ in 0..n {
            self.runs += 1;
            let run_index = self.runs as i32;
            self.proc_5();
            self.proc_4();
            let mut int_1_loc = 2;
            let mut int_2_loc = 3;
            self.str_2_loc = str_2nd;
            let mut enum_loc = Ident::Two;
            self.bool_glob = !self.func_2(&self.str_1_loc.clone(), &self.str_2_loc.clone());
            let mut int_3_loc = 0;
            while int_1_loc < int_2_loc {
                int_3_loc = 5 * int_1_loc - int_2_loc;
                int_3_loc = proc_7(int_1_loc, int_2_loc, int_3_loc);
                int_1_loc += 1;
            }
            self.proc_8(int_1_loc, int_3_loc);
            self.proc_1(PTR_GLOB);
            let mut ch = b'A';
            while ch <= self.ch_2_glob {
                if enum_loc == self.func_1_call(ch, b'C') {
                    enum_loc = self.proc_6(Ident::One, enum_loc);
                    self.str_2_loc = str_3rd;
                    int_2_loc = run_index;
                    self.int_glob = run_index;
                }
                ch += 1;
            }
            int_2_loc *= int_1_loc;
            int_1_loc = int_2_loc / int_3_loc;
            int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
            int_1_loc = self.proc_2(int_1_loc);
            self.int_1_loc = int_1_loc;
            self.int_2_loc = int_2_loc;
            self.int_3_loc = int_3_loc;
            self.enum_loc = enum_loc;
        }
    }

    fn proc_1(&mut self, ptr_val_par: usize) {
        let next = self.recs[ptr_val_par].ptr_comp;
        self.recs[next] = self.recs[PTR_GLOB];
        self.recs[ptr_val_par].int_comp = 5;
        self.recs[next].int_comp = self.recs[ptr_val_par].int_comp;
        self.recs[next].ptr_comp = self.recs[ptr_val_par].ptr_comp;
        self.recs[next].ptr_comp = self.proc_3(self.recs[next].ptr_comp);
        if self.recs[next].discr == Ident::One {
            self.recs[next].int_comp = 6;
            self.recs[next].enum_comp =
                self.proc_6(self.recs[ptr_val_par].enum_comp, self.recs[next].enum_comp);
            self.recs[next].ptr_comp = self.recs[PTR_GLOB].ptr_comp;
            self.recs[next].int_comp = proc_7(self.recs[next].int_comp, 10, 0);
        } else {
            let p = self.recs[ptr_val_par].ptr_comp;
            self.recs[ptr_val_par] = self.recs[p];
        }
    }

    fn proc_2(&mut self, int_par_ref: i32) -> i32 {
        let mut out = int_par_ref;
        let mut int_loc = int_par_ref + 10;
        loop {
            let mut enum_loc = Ident::Two;
            if self.ch_1_glob == b'A' {
                int_loc -= 1;
                out = int_loc - self.int_glob;
                enum_loc = Ident::One;
            }
            if enum_loc == Ident::One {
                return out;
            }
        }
    }

    fn proc_3(&mut self, ptr_ref_par: usize) -> usize {
        // Ptr_Glob is never null here.
        let r = self.recs[PTR_GLOB].ptr_comp;
        self.recs[PTR_GLOB].int_comp = proc_7(10, self.int_glob, 0);
        let _ = ptr_ref_par;
        r
    }

    fn proc_4(&mut self) {
        let bool_loc = self.ch_1_glob == b'A';
        self.bool_glob |= bool_loc;
        self.ch_2_glob = b'B';
    }

    fn proc_5(&mut self) {
        self.ch_1_glob = b'A';
        self.bool_glob = false;
    }

    #[inline(never)]
    fn proc_6(&self, enum_val_par: Ident, _enum_ref_par: Ident) -> Ident {
        let mut r = enum_val_par;
        if !func_3(enum_val_par) {
            r = Ident::Four;
        }
        match enum_val_par {
            Ident::One => Ident::One,
            Ident::Two => {
                if self.int_glob > 100 {
                    Ident::One
                } else {
                    Ident::Four
                }
            }
            Ident::Three => Ident::Two,
            Ident::Four => r,
            Ident::Five => Ident::Three,
        }
    }

    #[inline(never)]
    fn proc_8(&mut self, int_1_par: i32, int_2_par: i32) {
        let int_loc = (int_1_par + 5) as usize;
        self.arr_1[int_loc] = int_2_par;
        self.arr_1[int_loc + 1] = self.arr_1[int_loc];
        self.arr_1[int_loc + 30] = int_loc as i32;
        for i in int_loc..=int_loc + 1 {
            self.arr_2[int_loc][i] = int_loc as i32;
        }
        self.arr_2[int_loc][int_loc - 1] += 1;
        self.arr_2[int_loc + 20][int_loc] = self.arr_1[int_loc];
        self.int_glob = 5;
    }

    /// Func_1 as the main loop calls it: across the module boundary, never inlined.
    #[inline(never)]
    fn func_1_call(&mut self, ch_1_par: u8, ch_2_par: u8) -> Ident {
        self.func_1(ch_1_par, ch_2_par)
    }

    /// Func_1's body: Func_2, in the same module, may inline it (gcc does).
    #[inline(always)]
    fn func_1(&mut self, ch_1_par: u8, ch_2_par: u8) -> Ident {
        let ch_1_loc = ch_1_par;
        let ch_2_loc = ch_1_loc;
        if ch_2_loc != ch_2_par {
            Ident::One
        } else {
            self.ch_1_glob = ch_1_loc;
            Ident::Two
        }
    }

    #[inline(never)]
    fn func_2(&mut self, str_1: &Str30, str_2: &Str30) -> bool {
        let mut int_loc = 2usize;
        let mut ch_loc = 0u8;
        while int_loc <= 2 {
            if self.func_1(str_1[int_loc], str_2[int_loc + 1]) == Ident::One {
                ch_loc = b'A';
                int_loc += 1;
            }
        }
        if (b'W'..b'Z').contains(&ch_loc) {
            int_loc = 7;
        }
        if ch_loc == b'R' {
            true
        } else if str_1 > str_2 {
            int_loc += 7;
            self.int_glob = int_loc as i32;
            true
        } else {
            false
        }
    }

    /// The published end-of-run values that differ from what this run holds, as
    /// "name: got, expected" lines; empty when the run did the algorithm's work.
    pub fn check(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let mut expect = |name: &str, got: i64, want: i64| {
            if got != want {
                bad.push(format!("{name}: {got}, expected {want}"));
            }
        };
        expect("Int_Glob", self.int_glob as i64, 5);
        expect("Bool_Glob", self.bool_glob as i64, 1);
        expect("Ch_1_Glob", self.ch_1_glob as i64, b'A' as i64);
        expect("Ch_2_Glob", self.ch_2_glob as i64, b'B' as i64);
        expect("Arr_1_Glob[8]", self.arr_1[8] as i64, 7);
        expect(
            "Arr_2_Glob[8][7]",
            self.arr_2[8][7] as i64,
            self.runs as i64 + 10,
        );
        let (g, n) = (&self.recs[PTR_GLOB], &self.recs[NEXT_PTR_GLOB]);
        expect("Ptr_Glob->Discr", g.discr as i64, 0);
        expect("Ptr_Glob->Enum_Comp", g.enum_comp as i64, 2);
        expect("Ptr_Glob->Int_Comp", g.int_comp as i64, 17);
        expect("Next_Ptr_Glob->Discr", n.discr as i64, 0);
        expect("Next_Ptr_Glob->Enum_Comp", n.enum_comp as i64, 1);
        expect("Next_Ptr_Glob->Int_Comp", n.int_comp as i64, 18);
        expect("Int_1_Loc", self.int_1_loc as i64, 5);
        expect("Int_2_Loc", self.int_2_loc as i64, 13);
        expect("Int_3_Loc", self.int_3_loc as i64, 7);
        expect("Enum_Loc", self.enum_loc as i64, 1);
        for (name, got, want) in [
            (
                "Ptr_Glob->Str_Comp",
                g.str_comp,
                "DHRYSTONE PROGRAM, SOME STRING",
            ),
            (
                "Next_Ptr_Glob->Str_Comp",
                n.str_comp,
                "DHRYSTONE PROGRAM, SOME STRING",
            ),
            (
                "Str_1_Loc",
                self.str_1_loc,
                "DHRYSTONE PROGRAM, 1'ST STRING",
            ),
            (
                "Str_2_Loc",
                self.str_2_loc,
                "DHRYSTONE PROGRAM, 2'ND STRING",
            ),
        ] {
            if got != s30(want) {
                bad.push(format!(
                    "{name}: '{}', expected '{want}'",
                    String::from_utf8_lossy(&got).trim_end_matches('\0')
                ));
            }
        }
        bad
    }
}

#[inline(never)]
fn proc_7(int_1_par: i32, int_2_par: i32, _int_par_ref: i32) -> i32 {
    let int_loc = int_1_par + 2;
    int_2_par + int_loc
}

fn func_3(enum_par: Ident) -> bool {
    enum_par == Ident::Three
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ends_with_the_published_values() {
        let mut d = Dhrystone::new();
        d.run(1000);
        assert_eq!(d.check(), Vec::<String>::new());
        assert_eq!(d.arr_2[8][7], 1010);
        // State carries over: another batch keeps the values right and the count going.
        d.run(234);
        assert_eq!(d.check(), Vec::<String>::new());
        assert_eq!(d.arr_2[8][7], 1244);
    }

    #[test]
    fn a_broken_state_is_caught() {
        let mut d = Dhrystone::new();
        d.run(10);
        d.int_glob = 6;
        assert!(d.check().iter().any(|l| l.starts_with("Int_Glob")));
    }
}
