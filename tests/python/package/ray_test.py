# Sweeps on Ray: a local Ray instance with 2 CPUs runs each point as a task; the folder the
# driver writes equals the local CLI sweep's byte for byte, and `pagesim run --ray` goes
# through the same code.
import pytest

import pagesim
from conftest import assert_same_files, run_cli

ray = pytest.importorskip("ray", reason="ray comes from PyPI into the project's .venv (.ci/venv)")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_sweep_equals_local_cli_sweep(local_ray, repo_cwd, small_sweep_file, tmp_path):
    cli = run_cli("run", small_sweep_file, "--out", tmp_path / "cli", "-q")
    assert cli.returncode == 0, cli.stderr
    seen = []
    r = pagesim.sweep(str(small_sweep_file), out=tmp_path / "ray", executor="ray",
                      progress=lambda done, total, label: seen.append(done))
    assert_same_files(tmp_path / "cli", tmp_path / "ray")
    assert sorted(seen) == [1, 2, 3, 4]
    assert len(r.table) == 4
    # Resume on Ray: a point lost its summary.json; only it runs again.
    point = r.points[2].out
    (point / "summary.json").unlink()
    seen.clear()
    pagesim.sweep(str(small_sweep_file), out=tmp_path / "ray", executor="ray", existing="resume",
                  progress=lambda done, total, label: seen.append(label))
    assert seen == [r.points[2].label]
    assert_same_files(tmp_path / "cli", tmp_path / "ray")


def test_ray_task_errors_are_the_clis(local_ray, repo_cwd, small_sweep_file, tmp_path):
    # A point that fails while it runs (not while it is built): the simulation's error comes
    # back through Ray as the package's exception class.
    too_small = {"sweep.kv.slots": [15728, 64]}
    with pytest.raises(pagesim.ConfigError) as on_ray:
        pagesim.sweep(str(small_sweep_file), overrides=too_small, out=tmp_path / "o", executor="ray", progress=False)
    with pytest.raises(pagesim.ConfigError) as on_threads:
        pagesim.sweep(str(small_sweep_file), overrides=too_small, out=tmp_path / "t", jobs=1, progress=False)
    assert str(on_ray.value) == str(on_threads.value)
    assert "kv.slots" in str(on_ray.value)


def test_cli_ray_flag_runs_the_package_sweep(repo_cwd, small_sweep_file, tmp_path):
    # --ray execs `python -m pagesim sweep --executor ray`, which starts its own local instance.
    local = run_cli("run", small_sweep_file, "--out", tmp_path / "cli", "-q")
    assert local.returncode == 0, local.stderr
    distributed = run_cli("run", small_sweep_file, "--out", tmp_path / "ray", "--ray")
    assert distributed.returncode == 0, distributed.stderr
    assert "4 points (ray)" in distributed.stdout
    assert_same_files(tmp_path / "cli", tmp_path / "ray")
    # What the local run prints: the Ray start announced, a line per point, the same table.
    assert "pagesim: starting a local Ray instance" in distributed.stderr, distributed.stderr
    assert "pagesim: Ray ready in " in distributed.stderr and "4 points to run" in distributed.stderr
    assert "pagesim: [4/4] " in distributed.stderr
    assert distributed.stdout.startswith(local.stdout[:local.stdout.index("results in")]), distributed.stdout
