"""divergences.yaml: where pagesim is known to decide differently from an engine, why, and
how far it may move each summary metric. A list of entries:

  - engine: vllm              # as the recording's header says
    engine_version: 0.15.1
    scenario: async
    first_step: 12            # the first step that differs (pinned)
    cause: "..."              # why, with the engine's source named
    bounds:                   # |ours - theirs| / |theirs| allowed per summary metric
      mean_finish_s: 0.02     # (compare.summary_metrics); an unlisted metric must match

check() fails a recording that diverges without an entry, diverges elsewhere than its entry
says, moves a metric past its bound, or matches while an entry says it does not."""
import yaml

from pagesim.reports.engine_parity.compare import METRICS

KEYS = ("engine", "engine_version", "scenario", "first_step", "cause", "bounds")


class ExpectationError(Exception):
    """divergences.yaml is malformed: names the file, the entry and the key."""


def read_expectations(path):
    """{(engine, engine_version, scenario): entry} from `path`; {} when it does not exist."""
    try:
        with open(path) as fh:
            doc = yaml.safe_load(fh)
    except FileNotFoundError:
        return {}
    except yaml.YAMLError as e:
        raise ExpectationError(f"{path}: not YAML: {e}") from e
    if doc is None:
        return {}
    if not isinstance(doc, list):
        raise ExpectationError(f"{path}: expected a list of entries, found {type(doc).__name__}")
    out = {}
    for i, e in enumerate(doc):
        where = f"{path}: entry {i}"
        if not isinstance(e, dict):
            raise ExpectationError(f"{where}: expected a map with keys {list(KEYS)}")
        for k in KEYS:
            if k not in e:
                raise ExpectationError(f"{where}: key '{k}' is missing")
        for k in e:
            if k not in KEYS:
                raise ExpectationError(f"{where}: unknown key '{k}'; expected {list(KEYS)}")
        if not isinstance(e["first_step"], int) or e["first_step"] < 0:
            raise ExpectationError(f"{where}: key 'first_step' is {e['first_step']!r}, expected a step number >= 0")
        if not isinstance(e["bounds"], dict):
            raise ExpectationError(f"{where}: key 'bounds' must map summary metrics to relative bounds")
        for m, b in e["bounds"].items():
            if m not in METRICS:
                raise ExpectationError(f"{where}: bounds: unknown metric '{m}'; expected one of {list(METRICS)}")
            if isinstance(b, bool) or not isinstance(b, (int, float)) or b < 0:
                raise ExpectationError(f"{where}: bounds.{m} is {b!r}, expected a relative bound >= 0")
        key = (str(e["engine"]), str(e["engine_version"]), str(e["scenario"]))
        if key in out:
            raise ExpectationError(f"{where}: a second entry for {key}")
        out[key] = e
    return out


def check(results, expectations):
    """The failures (strings) of the Comparisons `results` against `expectations`."""
    failures = []
    seen = set()
    for c in results:
        key = (c.engine, c.engine_version, c.scenario)
        seen.add(key)
        e = expectations.get(key)
        name = f"{c.engine} {c.engine_version} {c.scenario}"
        if c.first is None:
            if e is not None:
                failures.append(f"{name}: identical on every step, but divergences.yaml lists a divergence at step "
                                f"{e['first_step']}: remove the stale entry")
            continue
        if e is None:
            failures.append(f"{name}: first divergence at step {c.first.step} ({', '.join(c.first.fields)}: pagesim "
                            f"{c.first.ours}, engine {c.first.theirs}), not explained in divergences.yaml")
            continue
        if c.first.step != e["first_step"]:
            failures.append(f"{name}: first divergence at step {c.first.step}, divergences.yaml says "
                            f"{e['first_step']}")
        for m, d in c.metric_differences().items():
            bound = e["bounds"].get(m, 0)
            if abs(d) > bound:
                failures.append(f"{name}: {m} differs by {d:+.2%} (pagesim {c.metrics_ours[m]}, engine "
                                f"{c.metrics_theirs[m]}), bound {bound:.2%}")
    for key in expectations:
        if key not in seen:
            failures.append(f"divergences.yaml lists {' '.join(key)}, which has no recording")
    return failures
