"""plot_cache_curve.py: reading the CSV of `pagesim trace cache-curve`, its errors, and the plot files."""
import os

import pytest

from pagesim.plots import cache_curve as plot_cache_curve

CSV = """policy,method,capacity_blocks,capacity_tokens,hit_tokens,prompt_tokens,hit_rate,hit_blocks,block_hit_rate
lru,stack,1,512,0,2048,0,0,0
lru,stack,4,2048,512,2048,0.25,1,0.25
lru,stack,2,1024,256,2048,0.125,1,0.25
fifo,direct,2,1024,0,2048,0,0,0
lfu,direct,2,1024,256,2048,0.125,1,0.25
"""


def write(tmp_path, text):
    path = tmp_path / "curve.csv"
    path.write_text(text)
    return str(path)


def test_read_curve_sorts_stack_points_and_groups_direct_runs(tmp_path):
    curve = plot_cache_curve.read_curve(write(tmp_path, CSV))
    assert curve["stack"] == [(512, 0.0), (1024, 0.125), (2048, 0.25)]
    assert curve["direct"] == {"fifo": [(1024, 0.0)], "lfu": [(1024, 0.125)]}


def test_a_bad_row_names_file_and_line(tmp_path):
    path = write(tmp_path, CSV.replace("lru,stack,4,2048,512", "lru,stack,4,many,512"))
    with pytest.raises(ValueError, match=r"curve\.csv:3: capacity_tokens"):
        plot_cache_curve.read_curve(path)
    with pytest.raises(ValueError, match="expected columns"):
        plot_cache_curve.read_curve(write(tmp_path, "a,b\n1,2\n"))


def test_main_writes_png_and_svg_beside_the_csv(tmp_path):
    path = write(tmp_path, CSV)
    assert plot_cache_curve.main([path, "--title", "t", "--mark", "1024"]) == 0
    for ext in ("png", "svg"):
        assert os.path.getsize(tmp_path / f"curve.{ext}") > 0
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    svg = (tmp_path / "curve.svg").read_text()
    assert plot_cache_curve.main([path, "--title", "t", "--mark", "1024"]) == 0  # same CSV => same file
    assert (tmp_path / "curve.svg").read_text() == svg
