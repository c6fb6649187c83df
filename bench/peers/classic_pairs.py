#!/usr/bin/env python3
"""The classic suite against UnixBench's own programs, in interleaved pairs.

Run by bench/peers/classic_vs_unixbench.sh (which finds and builds UnixBench and truebench);
not meant to be started by hand. For every test and pair, one UnixBench run and one truebench
run, the order alternating from pair to pair (UnixBench first in odd pairs, truebench first
in even ones, so a drift of the machine does not favour one side). Per row it prints the
median of the pairs' ratios truebench / UnixBench and a distribution-free confidence
interval of that median: the order statistics of the ratios that the binomial (sign-test)
distribution gives (at 6 pairs the lowest to the highest ratio, 96.9%; at 5, 93.8%), with
the host kind, the steal and the load of the pairs.

UnixBench side: each program as UnixBench's Run starts it (its arguments, LANG=en_US.utf8,
UB_BINDIR/UB_TMPDIR/UB_TESTDIR, in its testdir), COPIES copies started together, the pass's
rate computed as Run computes it: the copies' counts summed, over the mean of their TIME
lines or else of their wall times from start to exit, times the timebase (0: the program's
own rate). Run's 3 s of sync and sleep before a pass are left out.

truebench side: `truebench run classic.TEST --copies COPIES --json`, the median of its
passes, per variant (pinned pairs, Whetstone's work).
"""

import fcntl
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

TESTS = [
    "dhrystone", "whetstone", "execl", "file-copy-1024", "file-copy-256", "file-copy-4096",
    "pipe-throughput", "context-switch", "process-creation", "shell-1", "shell-8", "syscall",
]
# UnixBench's program, its arguments (DUR: the duration in seconds) and its own duration.
UB = {
    "dhrystone": ("dhry2reg", ["DUR"], 10),
    "whetstone": ("whetstone-double", [], None),
    "execl": ("execl", ["DUR"], 30),
    "file-copy-1024": ("fstime", ["-c", "-t", "DUR", "-d", "TMP", "-b", "1024", "-m", "2000"], 30),
    "file-copy-256": ("fstime", ["-c", "-t", "DUR", "-d", "TMP", "-b", "256", "-m", "500"], 30),
    "file-copy-4096": ("fstime", ["-c", "-t", "DUR", "-d", "TMP", "-b", "4096", "-m", "8000"], 30),
    "pipe-throughput": ("pipe", ["DUR"], 10),
    "context-switch": ("context1", ["DUR"], 10),
    "process-creation": ("spawn", ["DUR"], 30),
    "shell-1": ("looper", ["DUR", "BIN/multi.sh", "1"], 60),
    "shell-8": ("looper", ["DUR", "BIN/multi.sh", "8"], 60),
    "syscall": ("syscall", ["DUR"], 10),
}
# At one copy these two are placement-sensitive unpinned (where the partner or a fork's
# child runs moves the figure): judged on their pinned rows, their unpinned rows observed.
SENSITIVE = {"context-switch", "process-creation"}


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def cpu_times():
    """The machine's CPU time counters (/proc/stat 'cpu' line): (steal, total) in ticks."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return v[7], sum(v)


class Machine:
    """Load and steal around a pair."""

    def __enter__(self):
        self.load = os.getloadavg()[0]
        self.t0 = cpu_times()
        return self

    def __exit__(self, *exc):
        s1, t1 = cpu_times()
        d = t1 - self.t0[1]
        self.steal = (s1 - self.t0[0]) / d if d > 0 else 0.0
        return False


class UnixBench:
    def __init__(self, root, copies, seconds, tmp):
        self.bin = os.path.join(root, "pgms")
        self.testdir = os.path.join(root, "testdir")
        self.tmpdir = os.path.join(tmp, "ub-tmp")
        os.makedirs(self.tmpdir, exist_ok=True)
        self.copies = copies
        self.seconds = seconds
        self.env = dict(os.environ, LANG="en_US.utf8", UB_BINDIR=self.bin,
                        UB_TMPDIR=self.tmpdir, UB_TESTDIR=self.testdir)

    def argv(self, test):
        prog, args, own = UB[test]
        dur = str(self.seconds or own)
        sub = {"DUR": dur, "TMP": self.tmpdir}
        out = [os.path.join(self.bin, prog)]
        for a in args:
            a = sub.get(a, a)
            out.append(a.replace("BIN/", self.bin + "/"))
        return out

    def run(self, test, cpu=None, split=None):
        """One pass; its rate in UnixBench's unit. cpu: pin every copy there (taskset);
        split: (cpu0, cpu1) start the program on cpu0 and move its first child to cpu1."""
        argv = self.argv(test)
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu)] + argv
        procs = []
        for _ in range(self.copies):
            t0 = time.monotonic()
            p = subprocess.Popen(argv, cwd=self.testdir, env=self.env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            procs.append((p, t0))
        if split is not None:
            self.move_child(procs[0][0].pid, split)
        counts, times = [], []
        timebase = None
        for p, t0 in procs:
            err = p.communicate()[1].decode(errors="replace")
            elapsed = time.monotonic() - t0
            count = tm = None
            for line in err.splitlines():
                w = line.split("|")
                if w[0] == "COUNT" and len(w) >= 3:
                    count, timebase = float(w[1]), float(w[2])
                elif w[0] == "TIME" and len(w) >= 2:
                    tm = float(w[1])
            if p.returncode != 0 or count is None:
                die(f"UnixBench {' '.join(argv)} gave no COUNT (exit {p.returncode}): "
                    f"{err.strip()[:200]}")
            counts.append(count)
            times.append(tm if tm is not None else elapsed)
        c, t = sum(counts), statistics.mean(times)
        return c / (t / timebase) if timebase else c

    @staticmethod
    def move_child(pid, cpus):
        """Move the first child of `pid` (started on cpus[0]) to cpus[1] once it exists."""
        path = f"/proc/{pid}/task/{pid}/children"
        for _ in range(400):
            try:
                with open(path) as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            if kids:
                subprocess.run(["taskset", "-pc", str(cpus[1]), kids[0]], check=True,
                               stdout=subprocess.DEVNULL)
                return
            time.sleep(0.005)
        die("context1's partner process did not appear within 2 s")


def truebench(tb, test, copies, tmp):
    """One quick-plan run of classic.TEST: {variant: (median, unit, pinned CPUs or None)},
    and the run document."""
    env = dict(os.environ, TRUEBENCH_DB=os.path.join(tmp, "peer.db"),
               TRUEBENCH_LOCK=os.path.join(tmp, "lock"))
    p = subprocess.run([tb, "run", f"classic.{test}", "--copies", str(copies), "--json"],
                       env=env, stdin=subprocess.DEVNULL, capture_output=True)
    if p.returncode != 0:
        die(f"truebench run classic.{test}: {p.stderr.decode(errors='replace').strip()[-300:]}")
    doc = json.loads(p.stdout)
    out = {}
    for r in doc["results"]:
        prm = r.get("params", {})
        if prm.get("fsync"):
            continue
        v = prm.get("pair") or prm.get("work") or "plain"
        out[v] = (r["stats"]["median"], r.get("unit", ""), (r.get("placement") or {}).get("cpus"))
    return out, doc


def median_ci(x, want=0.95):
    """Median of x and a distribution-free interval for it: the order statistics
    x(k), x(n+1-k) with the largest k whose binomial coverage 1 - 2 P(B(n, 1/2) < k) is
    at least `want`; when even the range covers less (n < 6), the range. Returns
    (median, low, high, coverage)."""
    s = sorted(x)
    n = len(s)
    cdf = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n  # P(B < k)
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * cdf(k + 1) >= want:
        k += 1
    return statistics.median(s), s[k - 1], s[n - k], 1 - 2 * cdf(k)


def num(x):
    """A rate for the table: whole numbers with thousands separators, small ones with one
    decimal."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"


def host_kind(doc):
    """CPU model, vendor, hypervisor and what the probe says of the PMU."""
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("model name", "vendor_id", "cpu family", "model", "flags") and k not in info:
                info[k] = v.strip()
    flags = set(info.get("flags", "").split())
    env = doc.get("env", {})
    virt = env.get("virtualization") or {}
    vm = virt.get("vm") or "none seen"
    ctr = virt.get("container")
    pmu = env.get("pmu") or {}
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return (f"{info.get('model name', '?')} ({info.get('vendor_id', '?')}, family "
            f"{info.get('cpu family', '?')} model {info.get('model', '?')}, {isa}); "
            f"hypervisor: {vm}{'; container: ' + ctr if ctr else ''}; "
            f"PMU: {'yes' if pmu.get('available') else 'none'}")


def main():
    ub_root, tb, pairs, copies, tests, lock, tmp = sys.argv[1:8]
    pairs, copies = int(pairs), int(copies)
    tests = tests.split(",")
    seconds = int(os.environ.get("UB_SECONDS", "0") or 0)
    cpus = sorted(os.sched_getaffinity(0))
    ub = UnixBench(ub_root, copies, seconds, tmp)

    # The rows: (name, test, UnixBench placement, truebench variant, judged).
    rows = []
    for t in tests:
        one = copies == 1
        if t == "whetstone":
            rows.append(("whetstone work=unixbench", t, "os", "unixbench", True))
            rows.append(("whetstone all-modules (outside the index)", t, "os", "all-modules",
                         False))
            continue
        judged = not (t in SENSITIVE and (one or t == "context-switch"))
        rows.append((t + (" (unpinned: observed)" if not judged else ""), t, "os", "plain",
                     judged))
        if one and t in SENSITIVE:
            rows.append((f"{t}, same CPU (UnixBench: taskset)", t, "same-cpu", "same-cpu", True))
        if one and t == "context-switch" and len(cpus) >= 2:
            rows.append((f"{t}, cross CPU (UnixBench: partner moved)", t, "cross-cpu",
                         "cross-cpu", True))

    # Header: the machine, the tools, the plan.
    gcc = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout
    tbv = subprocess.run([tb, "--version"], capture_output=True, text=True).stdout.strip()
    # Seconds a pair takes: UnixBench's pass (Whetstone about 12 s, fstime's priming about
    # 15 s more), the pinned passes, truebench's quick run (about 4 s, the shell tests 8).
    per_pass = 0
    for t in tests:
        d = seconds or UB[t][2] or 12
        per_pass += d + (15 if t.startswith("file-copy") else 0) + (8 if t.startswith("shell") else 4)
        if copies == 1 and t in SENSITIVE:
            per_pass += d * (2 if t == "context-switch" else 1)
    print(f"# classic vs UnixBench in interleaved pairs, {time.strftime('%F %H:%M UTC', time.gmtime())}",
          file=sys.stderr)
    print(f"# {pairs} pairs per test, {copies} cop{'y' if copies == 1 else 'ies'}, "
          f"UnixBench durations: {'its own' if not seconds else f'{seconds} s'}; about "
          f"{per_pass * pairs // 60 + 1} min", file=sys.stderr)

    ratios = {r[0]: [] for r in rows}
    rates = {r[0]: ([], []) for r in rows}
    machine = {t: [] for t in tests}
    doc0 = None
    unit = {}
    start = cpu_times()
    load0 = os.getloadavg()[0]
    for i in range(pairs):
        for t in tests:
            lock_fd = None
            if lock:
                lock_fd = open(lock, "a")
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                with Machine() as m:
                    u = {}

                    def ub_side():
                        for name, test, place, _, _ in rows:
                            if test != t or place in u:
                                continue
                            if place == "os":
                                u[place] = ub.run(t)
                            elif place == "same-cpu":
                                u[place] = ub.run(t, cpu=cpus[0])
                            else:
                                u[place] = ub.run(t, cpu=cpus[0], split=(cpus[0], cpus[1]))

                    if i % 2 == 0:
                        ub_side()
                        v, doc = truebench(tb, t, copies, tmp)
                    else:
                        v, doc = truebench(tb, t, copies, tmp)
                        ub_side()
            finally:
                if lock_fd:
                    lock_fd.close()
            doc0 = doc0 or doc
            machine[t].append((m.load, m.steal))
            line = [f"pair {i + 1} {t}:"]
            for name, test, place, var, _ in rows:
                if test != t:
                    continue
                if var not in v:
                    die(f"truebench gave no '{var}' result for classic.{t}")
                tr, unit[name], where = v[var]
                want = {"same-cpu": [cpus[0]], "cross-cpu": cpus[:2]}.get(place)
                if want and where and sorted(where) != sorted(want):
                    print(f"note: truebench's {var} ran on CPUs {where}, UnixBench's on {want}",
                          file=sys.stderr)
                ratios[name].append(tr / u[place])
                rates[name][0].append(u[place])
                rates[name][1].append(tr)
                line.append(f"{var} {num(tr)} / {num(u[place])} = {tr / u[place]:.3f};")
            line.append(f"load {m.load:.2f}, steal {100 * m.steal:.1f}%")
            print(" ".join(line), file=sys.stderr, flush=True)
    end = cpu_times()
    steal_all = (end[0] - start[0]) / max(1, end[1] - start[1])

    # The report.
    print(f"machine: {host_kind(doc0)}")
    commit = (doc0.get("tool") or {}).get("commit", "?")
    print(f"kernel {os.uname().release}; {len(cpus)} CPUs usable; gcc {gcc.strip()} "
          f"(UnixBench's Makefile flags); {tbv} (commit {commit})")
    print(f"{pairs} interleaved pairs per test (order alternating), {copies} "
          f"cop{'y' if copies == 1 else 'ies'}; UnixBench passes of "
          f"{'its own length (10, 30 or 60 s)' if not seconds else f'{seconds} s'}, truebench's "
          f"quick plan; load {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
          f"steal {100 * steal_all:.1f}% over the run")
    _, _, _, cov = median_ci([0.0] * pairs)
    print(f"ratio = truebench / UnixBench per pair; interval: distribution-free {100 * cov:.1f}% "
          f"interval of the median ratio (order statistics, binomial)")
    print()
    print("| test | UnixBench | truebench | unit | median ratio | interval | verdict | "
          "load | steal |")
    print("|---|---:|---:|---|---:|---|---|---|---|")
    for name, test, _, _, judged in rows:
        r = ratios[name]
        med, lo, hi, _ = median_ci(r)
        if not judged:
            verdict = "observed, not judged"
        elif 0.9 <= lo and hi <= 1.1:
            verdict = "within ±10%"
        elif hi < 0.9 or lo > 1.1:
            verdict = "OUTSIDE ±10%"
        else:
            verdict = "undecided (interval crosses ±10%)"
        loads = [x[0] for x in machine[test]]
        steals = [x[1] for x in machine[test]]
        print(f"| {name} | {num(statistics.median(rates[name][0]))} | "
              f"{num(statistics.median(rates[name][1]))} | {unit[name]} | **{med:.3f}** | "
              f"{lo:.3f}-{hi:.3f} | {verdict} | {min(loads):.1f}-{max(loads):.1f} | "
              f"{100 * max(steals):.1f}% |")


if __name__ == "__main__":
    main()
