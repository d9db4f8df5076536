"""Two step records of one scenario, set side by side: the steps compared, how many are
identical, the first divergence, and the summary metrics each record implies."""
from dataclasses import dataclass, field

# The decisions a step record holds, in the order a divergence is named.
DECISIONS = ("scheduled", "new", "preempted", "finished", "free_blocks", "blocks", "t")
# The summary metrics a record implies (summary_metrics), in order.
METRICS = ("steps", "finished", "preemptions", "prefix_hit_tokens", "mean_first_scheduled_s", "mean_finish_s",
           "mean_free_blocks")


@dataclass
class Divergence:
    step: int
    fields: list           # the DECISIONS that differ there
    ours: dict             # those fields' values in pagesim's record (None: no such step)
    theirs: dict           # ... in the engine's


@dataclass
class Comparison:
    scenario: str
    engine: str
    engine_version: str
    steps_ours: int
    steps_theirs: int
    identical: int                        # steps equal in every decision
    first: Divergence = None              # None: identical throughout
    metrics_ours: dict = field(default_factory=dict)
    metrics_theirs: dict = field(default_factory=dict)

    @property
    def steps_compared(self):
        return max(self.steps_ours, self.steps_theirs)

    @property
    def share_identical(self):
        return self.identical / self.steps_compared if self.steps_compared else 1.0

    def metric_differences(self):
        """Per summary metric, (ours - theirs) / theirs (0 where both are 0; inf where only
        theirs is)."""
        out = {}
        for k, theirs in self.metrics_theirs.items():
            ours = self.metrics_ours[k]
            out[k] = 0.0 if ours == theirs else (float("inf") if theirs == 0 else (ours - theirs) / abs(theirs))
        return out


def summary_metrics(record):
    """What a run's summary would report, from its steps alone: steps, requests finished,
    preemptions, prefix-hit tokens of admissions, the mean step time at which requests were
    first scheduled and finished, and the mean free blocks after scheduling."""
    first, finish = {}, {}
    preemptions = hits = free = 0
    for s in record.steps:
        for rid, cached, *_ in s["new"]:
            first.setdefault(rid, s["t"])
            hits += cached
        for rid in s["finished"]:
            finish[rid] = s["t"]
        preemptions += len(s["preempted"])
        free += s["free_blocks"]
    n = len(record.steps)
    return {
        "steps": n,
        "finished": len(finish),
        "preemptions": preemptions,
        "prefix_hit_tokens": hits,
        "mean_first_scheduled_s": sum(first.values()) / len(first) if first else 0.0,
        "mean_finish_s": sum(finish.values()) / len(finish) if finish else 0.0,
        "mean_free_blocks": free / n if n else 0.0,
    }


# Step start times agree to within this (s): pagesim prices what a harness with a stand-in
# model cannot (a LoRA adapter's load over PCIe, about 0.5 ms) on top of the scenarios' 1 s
# steps; any difference of decisions moves a start by a whole step.
T_TOLERANCE_S = 0.01


def _equal(k, a, b):
    return abs(a - b) <= T_TOLERANCE_S if k == "t" else a == b


def _project(step):
    return {k: step[k] for k in DECISIONS}


def compare(ours, theirs):
    """The Comparison of pagesim's record `ours` with an engine's record `theirs` (Records of
    one scenario)."""
    c = Comparison(theirs.scenario, theirs.engine, str(theirs.engine_version), len(ours.steps), len(theirs.steps), 0,
                   metrics_ours=summary_metrics(ours), metrics_theirs=summary_metrics(theirs))
    for i in range(max(len(ours.steps), len(theirs.steps))):
        a = _project(ours.steps[i]) if i < len(ours.steps) else None
        b = _project(theirs.steps[i]) if i < len(theirs.steps) else None
        differ = list(DECISIONS) if a is None or b is None else [k for k in DECISIONS if not _equal(k, a[k], b[k])]
        if not differ:
            c.identical += 1
            continue
        if c.first is None:
            c.first = Divergence(i, differ, {k: a[k] for k in differ} if a else None,
                                 {k: b[k] for k in differ} if b else None)
    return c
