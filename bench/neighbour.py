#!/usr/bin/env python3
"""A CPU-bound neighbour in bursts: one CPU busy for 0.5-3 s, then idle for 0.5-3 s, at
random, until killed. It stands in for a loud hour on a host whose hypervisor gives none
(bench/aa_compare.sh --neighbour, bench/loud_test.sh). Give a seed to repeat the bursts."""
import random
import sys
import time

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)
while True:
    end = time.monotonic() + rng.uniform(0.5, 3.0)
    while time.monotonic() < end:
        pass
    time.sleep(rng.uniform(0.5, 3.0))
