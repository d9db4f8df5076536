# python/examples runs as a user would run it: a script, here from a folder other than the
# repository root (the example and the experiment's paths do not depend on the working directory).
import os
import subprocess
import sys

from conftest import REPO


def test_block_size_sweep_example(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "python/examples/block_size_sweep.py"), "--out", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    png = tmp_path / "block_size_sweep.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert (tmp_path / "sweep" / "sweep.csv").is_file()
    lines = done.stdout.splitlines()
    assert lines[0].split()[:2] == ["allocator.block_size", "throughput_rps"]
    assert [line.split()[0] for line in lines[1:6]] == ["1", "4", "16", "64", "256"]
