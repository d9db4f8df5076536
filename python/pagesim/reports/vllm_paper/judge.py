"""Pure judging of pagesim's numbers against the vLLM paper's: the report's targets and the
arithmetic behind each verdict. Functions take plain numbers and return plain values (no I/O,
no plotting), so each verdict can be tested on hand-made inputs.
"""
import dataclasses
import math
import statistics

from pagesim.reports.vllm_paper import paper

# Targets: how close a pagesim number must be to the paper's to count as reproduced.
FIG2_TOL_PP = 2.0  # Fig. 2: percentage points of KV memory, each class
FIG13A_TOL = 0.10  # Fig. 13a: relative difference of the mean batch
# Fig. 12: a rate is "sustainable" while the mean normalized latency stays at or below this
# (s/token); the sensitivity table also judges these other thresholds.
LATENCY_THRESHOLD = 0.5
LATENCY_THRESHOLDS_SWEPT = (0.2, LATENCY_THRESHOLD, 1.0)


def fold_fig2(memory_pct):
    """pagesim's five memory classes (percent, by name) folded into the paper's four Fig. 2
    classes: rounding and free together are the paper's external fragmentation & others."""
    return (memory_pct["token_states"], memory_pct["reserved"], memory_pct["over_reserved"],
            memory_pct["rounding"] + memory_pct["free"])


@dataclasses.dataclass(frozen=True)
class Spread:
    """Mean, lowest and highest of one number over seeds."""
    mean: float
    low: float
    high: float

    @property
    def half_range(self):
        return (self.high - self.low) / 2


def spread(values):
    """The Spread of `values`. Raises ValueError when there are none (no seed ran)."""
    values = list(values)
    if not values:
        raise ValueError("spread of no values: no seed results")
    return Spread(statistics.mean(values), min(values), max(values))


def within_pp(ours, expected, tol_pp=FIG2_TOL_PP):
    """Whether two percentages differ by at most tol_pp percentage points."""
    return abs(ours - expected) <= tol_pp


def relative_diff(ours, expected):
    """ours / expected − 1. REQUIRES: expected != 0."""
    return ours / expected - 1


def within_relative(ours, expected, tol=FIG13A_TOL):
    """Whether ours lies within ±tol (a fraction) of expected. REQUIRES: expected != 0."""
    return abs(relative_diff(ours, expected)) <= tol


def in_range(value, low, high):
    """Whether low <= value <= high (both ends count)."""
    return low <= value <= high


@dataclasses.dataclass(frozen=True)
class Fig2Cell:
    """One class of one system's Fig. 2 bar: the paper's number, pagesim's on seed 0 and over
    seeds, and the two verdicts (None where the paper gives no number)."""
    system: str
    cls: int  # index into paper.FIG2_CLASSES
    expected: float | None
    seed0: float
    seeds: Spread
    seed0_ok: bool | None
    mean_ok: bool | None

    @property
    def diff(self):
        return self.seed0 - self.expected

    @property
    def mean_diff(self):
        return self.seeds.mean - self.expected


def judge_fig2(seed0, seeds, expected=None, tol_pp=FIG2_TOL_PP):
    """Judges every class of every system of `expected` (default paper.FIG2), system by system
    and class by class in its order. seed0 maps a system to its four folded classes on seed 0,
    seeds to the list of those over every seed. Raises ValueError naming a system that has no
    seed-0 result or no seed results."""
    expected = paper.FIG2 if expected is None else expected
    cells = []
    for system, numbers in expected.items():
        if system not in seed0:
            raise ValueError(f"Fig. 2: no seed-0 result for {system}")
        if not seeds.get(system):
            raise ValueError(f"Fig. 2: no seed results for {system}")
        for i, want in enumerate(numbers):
            ours = seed0[system][i]
            over = spread(v[i] for v in seeds[system])
            if want is None:
                cells.append(Fig2Cell(system, i, None, ours, over, None, None))
            else:
                cells.append(Fig2Cell(system, i, want, ours, over, within_pp(ours, want, tol_pp),
                                      within_pp(over.mean, want, tol_pp)))
    return cells


def sustainable_rate(points, threshold=LATENCY_THRESHOLD):
    """The highest request rate whose normalized latency stays at or below `threshold`, linear
    between the (rate, latency) `points`; the first crossing counts. Returns (rate, censored):
    rate 0 when even the lowest rate is above the threshold; censored when the curve never
    crosses inside the sweep, so the rate (the highest swept) is only a lower bound.
    REQUIRES: points is not empty."""
    points = sorted(points)
    if points[0][1] > threshold:
        return 0.0, False
    for (r0, l0), (r1, l1) in zip(points, points[1:]):
        if l0 <= threshold < l1:
            return r0 + (r1 - r0) * (threshold - l0) / (l1 - l0), False
    return points[-1][0], True


def rate_ratio(numerator, denominator):
    """numerator / denominator, infinite when the denominator sustains no rate at all."""
    return numerator / denominator if denominator > 0 else math.inf


def first_match(wanted, candidates):
    """The first item of `candidates` (pairs (item, key)) whose key equals `wanted`, or None."""
    return next((item for item, key in candidates if key == wanted), None)


def batches_within_capacity(capacity, batch, low, high):
    """The (capacity, batch) pairs of the cost models whose capacity lies in [low, high], in the
    order of `batch`. capacity maps a cost model's label to its saturated throughput, batch is
    a list of (label, mean batch). Raises KeyError for a label without a capacity."""
    return [(capacity[label], b) for label, b in batch if in_range(capacity[label], low, high)]


def beam_fits(savings, low, high):
    """Which beam models put Fig. 15's beam savings inside [low, high]. savings maps a model
    column to {beam width: saving %}. Returns (fits, per_width): the columns inside the range at
    every width any column has, in `savings` order, and for each of those widths (sorted) the
    columns inside the range there."""
    widths = sorted({w for by_width in savings.values() for w in by_width})
    inside = {c: {w for w, v in by_width.items() if in_range(v, low, high)} for c, by_width in savings.items()}
    fits = [c for c in savings if all(w in inside[c] for w in widths)]
    return fits, {w: [c for c in savings if w in inside[c]] for w in widths}
