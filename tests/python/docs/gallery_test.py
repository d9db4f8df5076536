"""docs/gallery.md shows every figure type `pagesim plot` and `pagesim compare` write (issue #41
item 3), its images are committed and small, and each figure is a stem the plot code writes."""
import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
FIGURES = ["memory_over_time", "latency_cdf", "sweep_metrics", "sweep_memory", "sweep_latency_cdf", "memory_bars",
           "fragmentation", "compare_metrics", "compare_latency_cdf"]


def test_every_figure_type_is_in_the_gallery():
    with open(os.path.join(REPO, "docs", "gallery.md")) as f:
        text = f.read()
    images = re.findall(r"!\[[^\]]*\]\(gallery/([^)]+\.png)\)", text)
    for stem in FIGURES:
        assert any(re.fullmatch(rf"[a-z0-9_]+?_{stem}(_column)?\.png", i) for i in images), stem
    assert any(i.endswith("_column.png") for i in images)  # both printed widths shown
    for i in images:
        assert os.path.isfile(os.path.join(REPO, "docs", "gallery", i)), i
    sources = "".join(open(os.path.join(REPO, "python", "pagesim", p)).read()
                      for p in ("plot.py", "compare.py", os.path.join("plots", "memory.py")))
    for stem in FIGURES:
        assert f'"{stem}"' in sources, stem  # the figure the gallery names is one the code writes


def test_gallery_stays_small():
    folder = os.path.join(REPO, "docs", "gallery")
    total = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".png"))
    assert total < 600 * 1024, total
