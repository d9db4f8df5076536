"""A step record (experiments/engine_parity/FORMAT.md): its header and its steps, read from
a JSON-lines file, gzip-compressed or not. Every malformed part is a RecordError naming the
file, the line and the field."""
import gzip
import json

FORMAT = "pagesim-engine-steps"
FORMAT_VERSIONS = (1,)
ENGINES = ("vllm", "sglang", "pagesim")
# Each step's fields and what each holds: "pairs" lists [id, n, ...] sorted by id.
STEP_FIELDS = {
    "step": int,
    "t": (int, float),
    "scheduled": "pairs",
    "new": "pairs",
    "preempted": "ids",
    "finished": "ids",
    "free_blocks": int,
    "blocks": "pairs",
}
OPTIONAL_STEP_FIELDS = {"replica": int}


class RecordError(Exception):
    """A record that is not the format: names the file, the line and the field."""


class Record:
    """header: the first line's object; steps: every step's object, in order."""

    def __init__(self, path, header, steps):
        self.path = path
        self.header = header
        self.steps = steps

    @property
    def engine(self):
        return self.header["engine"]

    @property
    def engine_version(self):
        return self.header["engine_version"]

    @property
    def scenario(self):
        return self.header["scenario"]

    def pool_blocks(self):
        """Blocks a request can own: vLLM's num_gpu_blocks less its null block; SGLang's and
        pagesim's pool_blocks as written."""
        h = self.header
        return h["num_gpu_blocks"] - 1 if "num_gpu_blocks" in h else h["pool_blocks"]


def _open(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def _check_list(path, line, key, value, kind):
    where = f"{path}:{line}: field '{key}'"
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, found {type(value).__name__}")
    for item in value:
        if kind == "ids":
            if not isinstance(item, int):
                raise RecordError(f"{where}: expected request ids (integers), found {item!r}")
        elif not (isinstance(item, list) and len(item) >= 2 and all(isinstance(x, int) for x in item)):
            raise RecordError(f"{where}: expected [id, count, ...] lists of integers, found {item!r}")
    if kind == "pairs" and [p[0] for p in value] != sorted(p[0] for p in value):
        raise RecordError(f"{where}: expected entries sorted by request id")


def read(path):
    """The Record at `path`. Raises RecordError for an unknown format, version or engine, a
    missing or mistyped field, or a line that is not JSON."""
    try:
        with _open(path) as fh:
            lines = fh.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise RecordError(f"{path}: cannot read: {e}") from e
    if not lines:
        raise RecordError(f"{path}: empty; expected a header line and one line per step")
    objects = []
    for i, text in enumerate(lines, 1):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecordError(f"{path}:{i}: not JSON ({e.msg})") from e
        if not isinstance(obj, dict):
            raise RecordError(f"{path}:{i}: expected a JSON object, found {type(obj).__name__}")
        objects.append(obj)
    header = objects[0]
    for key in ("format", "format_version", "engine", "engine_version", "scenario", "block_size"):
        if key not in header:
            raise RecordError(f"{path}:1: header field '{key}' is missing")
    if header["format"] != FORMAT:
        raise RecordError(f"{path}:1: header field 'format' is {header['format']!r}, expected {FORMAT!r}")
    if header["format_version"] not in FORMAT_VERSIONS:
        raise RecordError(f"{path}:1: header field 'format_version' is {header['format_version']!r}, expected one "
                          f"of {list(FORMAT_VERSIONS)}")
    if header["engine"] not in ENGINES:
        raise RecordError(f"{path}:1: header field 'engine' is {header['engine']!r}, expected one of {list(ENGINES)}")
    if "num_gpu_blocks" not in header and "pool_blocks" not in header:
        raise RecordError(f"{path}:1: header field 'num_gpu_blocks' (or 'pool_blocks') is missing")
    steps = objects[1:]
    for n, step in enumerate(steps):
        line = n + 2
        for key, kind in STEP_FIELDS.items():
            if key not in step:
                raise RecordError(f"{path}:{line}: field '{key}' is missing")
            value = step[key]
            if kind in ("pairs", "ids"):
                _check_list(path, line, key, value, kind)
            elif isinstance(value, bool) or not isinstance(value, kind):
                raise RecordError(f"{path}:{line}: field '{key}' is {value!r}, expected a number")
        for key in step:
            if key not in STEP_FIELDS and key not in OPTIONAL_STEP_FIELDS:
                raise RecordError(f"{path}:{line}: unknown field '{key}'; expected {sorted(STEP_FIELDS)}")
        if step["step"] != n:
            raise RecordError(f"{path}:{line}: field 'step' is {step['step']}, expected {n} (steps in order from 0)")
    return Record(path, header, steps)
