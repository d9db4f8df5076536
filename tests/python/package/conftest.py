# Fixtures of the pagesim package's tests: the CLI of the same build (beside the compiled
# module: <build>/python/pagesim/_core*.so -> <build>/pagesim), small experiments, and the
# comparison experiments/reference/compare.sh makes (every file byte for byte, summary.json
# without its host timings).
import re
import subprocess
from pathlib import Path

import pytest

import pagesim

REPO = Path(__file__).resolve().parents[3]
HOST_TIMING = re.compile(rb'^\s*"(wall_s|[a-z_]+_per_wall_second)":.*$\n', re.MULTILINE)

# Fig. 2 of the vLLM paper: a 4-point sweep (Orca's three reservations and vLLM), about a second.
FIG2 = REPO / "experiments" / "vllm_paper" / "fig2.yaml"

# A 2 x 2 grid over the block size and the scheduler, short and with iterations.csv.
SMALL_SWEEP = """\
name: small-sweep
seed: 3
workload:
  kind: synthetic
  arrival: {kind: poisson, rate: 6.0}
  lengths: {kind: cycle_shuffle, path: traces/data/sharegpt_opt_lengths.csv}
  max_total_tokens: 2048
  duration_s: 40
model: opt-13b
gpu: a100-40gb
kv: {slots: 15744}  # whole blocks of 8 and 32: no warning, so a file and a string run alike
allocator: {kind: paged, block_size: 16}
scheduler: {kind: vllm, max_num_batched_tokens: 2560, max_num_seqs: 256}
cost: {kind: roofline, iteration_overhead_s: 0.0186}
output: {iterations_stride: 1}
sweep:
  allocator.block_size: [8, 32]
  scheduler.kind: [vllm, orca]
"""


def cli_path() -> Path:
    path = Path(pagesim._core.__file__).resolve().parents[2] / "pagesim"
    assert path.is_file(), f"the CLI of this build is missing: {path}"
    return path


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli_path()), *map(str, args)], cwd=cwd, capture_output=True, text=True)


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` by relative path; summary.json without host timings."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.name == "summary.json":
                data = HOST_TIMING.sub(b"", data)
            out[str(p.relative_to(folder))] = data
    return out


def assert_same_files(a: Path, b: Path) -> None:
    fa, fb = files_of(a), files_of(b)
    assert sorted(fa) == sorted(fb)
    differing = [name for name in fa if fa[name] != fb[name]]
    assert not differing, f"files differ between {a} and {b}: {differing}"


@pytest.fixture
def repo_cwd(monkeypatch):
    """Runs the test in the repository root, where the experiments' trace paths resolve."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def small_sweep_file(tmp_path) -> Path:
    path = tmp_path / "small_sweep.yaml"
    path.write_text(SMALL_SWEEP)
    return path
