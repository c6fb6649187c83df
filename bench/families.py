"""The families the bench scripts judge compare's rows by (bench/aa_compare.sh,
bench/ab_aa.sh): a benchmark's rows, ctx split by placement; the MDE each aims at on a
quiet host (the budget's allocation targets); the claims that count as a measured cause."""

# The MDE each family aims at on a quiet host.
TARGETS = {"timers": 0.03, "memory.latency": 0.08, "ctx same-cpu": 0.10,
           "memory.bandwidth": 0.15, "c2c.cacheline": 0.20, "classic": 0.05}
# An explanation's claims that make a call one a measured cause claims.
CLAIMS = ("explains", "partly", "contributes")


def family(r):
    """The family of a compare row (`compare --json`) or a run document's result."""
    b = r["benchmark"].split("@")[0]
    placement = r["placement"]["name"] if isinstance(r["placement"], dict) else r["placement"]
    if b.startswith("ctx."):
        return "ctx same-cpu" if placement == "same-cpu" else "ctx (other placements)"
    if b == "timers.clock-read":
        return "timers"
    if b.startswith("classic."):
        return "classic"
    return b
