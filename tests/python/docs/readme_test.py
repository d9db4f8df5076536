"""The README's commands and links: the quick start is the two commands that install and build
(`bash .ci/main`, `bash .ci/test`, not run here), every block marked `<!-- runnable -->` runs
as written against the built binary, and every relative link of the README and docs/ names a
file that exists."""
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from pagesim_binary import pagesim_binary  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
README = os.path.join(REPO, "README.md")


def read(path):
    with open(path) as f:
        return f.read()


def fenced_blocks(text, marker="<!-- runnable -->"):
    """The fenced blocks preceded by `marker` on the line before their opening fence."""
    return re.findall(re.escape(marker) + r"\n```[a-z]*\n(.*?)\n```", text, re.S)


def test_quick_start_is_the_two_commands():
    quick = re.search(r"## Quick start\n(.*?)\n## ", read(README), re.S).group(1)
    blocks = re.findall(r"```sh\n(.*?)\n```", quick, re.S)
    commands = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert commands == ["bash .ci/main", "bash .ci/test"]
    for script in (".ci/main", ".ci/test"):
        assert os.path.isfile(os.path.join(REPO, script)), script


def test_runnable_blocks_run(tmp_path):
    blocks = fenced_blocks(read(README))
    assert blocks, "README has no runnable block"
    # The commands name repository paths (experiments/, traces/) and write out/: run them in a
    # scratch folder that links the inputs, with `pagesim` on the PATH as after `pip install .`.
    for name in ("experiments", "traces", "docs"):
        os.symlink(os.path.join(REPO, name), tmp_path / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(os.path.abspath(pagesim_binary()), bin_dir / "pagesim")  # skips without a built binary
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for block in blocks:
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, f"README command failed ({p.returncode}): {line}\n{p.stdout}\n{p.stderr}"
    assert (tmp_path / "out" / "fig2" / "sweep.csv").is_file()
    assert (tmp_path / "experiment.schema.json").stat().st_size > 1000


@pytest.mark.parametrize("doc", ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(REPO, "docs"))
                                                      if f.endswith(".md")))
def test_relative_links_exist(doc):
    path = os.path.join(REPO, doc)
    text = re.sub(r"```.*?```", "", read(path), flags=re.S)
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file = target.split("#")[0]
        if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), file))):
            missing.append(target)
    assert not missing, f"{doc}: links to missing files: {missing}"
