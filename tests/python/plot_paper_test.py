"""Figures ready for a paper (issue #41 item 2): tick labels that never overlap, measured at
the printed size; a numeric sweep's axis labelled at every swept value; ordered colours for
ordered values; coinciding curves told apart by style and marker; latency CDFs on a log axis
past a decade; names with units (SLOs included); both sizes written; Fig. 2's comparison with
the paper and the measurement window from `pagesim plot` itself."""
import struct

import matplotlib.pyplot as plt
import pytest

from pagesim import _figures, labels, plot
from pagesim.plots import styles, ticks
from pagesim.plots.sizes import SIZES
from pagesim_binary import REPO, run_pagesim
from plot_test import axis_texts, write_sweep

ROUTERS = ["round robin", "least outstanding", "least KV", "prefix-aware", "random"]


def overlaps(ax):
    """Pairs of neighbouring tick labels whose text overlaps. Labels turned by the same angle
    are rectangles in a frame turned by it, where two neighbours a tick spacing d apart are
    d·cos θ along and d·sin θ across the text: they overlap when both are less than the text's
    width and height (for θ = 0 this is the plain bounding-box test)."""
    import math

    fig = ax.figure
    fig.canvas.draw()
    shown = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
    found = []
    for a, b in zip(shown, shown[1:]):
        theta = math.radians(a.get_rotation())
        sizes = []
        for t in (a, b):
            rotation = t.get_rotation()
            t.set_rotation(0)
            box = t.get_window_extent(fig.canvas.get_renderer())
            t.set_rotation(rotation)
            sizes.append((box.width, box.height))
        x = [ax.transData.transform((t.get_position()[0], 0))[0] for t in (a, b)]
        d = abs(x[1] - x[0])
        w = (sizes[0][0] + sizes[1][0]) / 2 if theta == 0 else max(sizes[0][0], sizes[1][0])
        h = max(sizes[0][1], sizes[1][1])
        if d * abs(math.cos(theta)) < w and d * abs(math.sin(theta)) < h:
            found.append((a.get_text(), b.get_text()))
    return found


@pytest.mark.parametrize("size", ["page", "column"])
@pytest.mark.parametrize("names", [ROUTERS, [f"replicas.router={n}" for n in ROUTERS],
                                   [f"allocator.block_size={2 ** i}" for i in range(9)],
                                   [f"point-{i}" for i in range(60)]])
def test_categorical_labels_never_overlap(size, names):
    s = SIZES[size]
    fig, ax = plt.subplots(figsize=(s.width_in, 1.8))
    ax.set_xlim(-0.6, len(names) - 0.4)
    fig.tight_layout()
    how = ticks.categorical_ticks(ax, names, s.font)
    assert not overlaps(ax), how
    if names is ROUTERS and size == "page":
        assert how == "horizontal"  # the rotation comes from measured widths, not from a count of points
    plt.close(fig)


def test_block_sizes_are_labelled_at_every_swept_value(tmp_path):
    write_sweep(tmp_path, 1, [2 ** i for i in range(9)])
    plot.plot(str(tmp_path), ["throughput_rps"], ["svg"], ["page", "column"])
    for name in ("sweep_metrics.svg", "sweep_metrics_column.svg"):
        texts = axis_texts(tmp_path / name)
        assert {str(2 ** i) for i in range(9)} <= texts, name  # 1, 2, 4, ... 256, not 2^1, 2^3
        assert "block size (tokens)" in texts and not any("mathdefault" in t for t in texts)
    assert ticks.log_base([1, 2, 4, 256]) == 2 and ticks.log_base([10, 100, 1000]) == 10
    assert ticks.log_base([1, 2, 3, 4]) == 0 and ticks.log_base([100, 200, 300]) == 0


def test_ordered_values_get_an_ordered_palette():
    ordered = styles.colors(9, True)
    lightness = [0.299 * r + 0.587 * g + 0.114 * b for r, g, b, _ in ordered]
    assert lightness == sorted(lightness)  # dark to light along the values
    assert styles.colors(3, False) == ["C0", "C1", "C2"]


def test_coinciding_curves_stay_distinguishable():
    looks = styles.series(4, False)
    assert len({(lk["marker"], str(lk["linestyle"])) for lk in looks}) == 4
    assert [lk["linewidth"] for lk in looks] == sorted((lk["linewidth"] for lk in looks), reverse=True)
    assert [lk["zorder"] for lk in looks] == sorted(lk["zorder"] for lk in looks)  # thinner ones on top
    marks = [set(styles.cdf_markevery(1000, i, 3)) for i in range(3)]
    assert not (marks[0] & marks[1]) and not (marks[1] & marks[2])  # same data: markers at other heights


def test_latency_cdf_is_log_past_a_decade():
    fig, ax = plt.subplots()
    assert _figures.log_x_if_wide(ax, [0.03, 0.04, 0.7]) and ax.get_xscale() == "log"
    fig2, ax2 = plt.subplots()
    assert not _figures.log_x_if_wide(ax2, [0.03, 0.2]) and ax2.get_xscale() == "linear"
    plt.close(fig)
    plt.close(fig2)


def test_names_and_units_of_keys_values_and_slos():
    assert labels.axis_label("allocator.block_size") == "block size (tokens)"
    assert labels.value_name("replicas.router", "least_kv") == "least KV"
    assert labels.value_name("scheduler.kind", "vllm-v1") == "vLLM v1"
    assert labels.axis_label("slo.attainment") == "SLO attainment (fraction of requests)"
    assert labels.axis_label("slo.goodput_rps") == "goodput (requests meeting the SLO) (req/s)"
    assert labels.axis_label("slo.ttft_s") == "TTFT target (s)"


def png_width(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">I", head[16:20])[0]


def test_fig2_draws_the_paper_comparison_and_the_window(tmp_path):
    out = tmp_path / "fig2"
    run_pagesim("run", f"{REPO}/experiments/vllm_paper/fig2.yaml", "--out", str(out), "-q")
    files = plot.plot(str(out), None, ["png", "svg"])
    for stem in ("memory_bars", "fragmentation", "sweep_metrics", "sweep_latency_cdf"):
        assert {f"{stem}.png", f"{stem}_column.png"} <= set(files), stem
    bars = axis_texts(out / "memory_bars.svg")
    assert {"Orca (Max)", "vLLM", "pagesim (left bar)", "20.4", "57.3"} <= bars  # the paper's numbers beside
    assert plot.measurement_window(str(out / "03-vllm")) == (300.0, 900.0)
    assert "outside the measurement window (faded)" in axis_texts(out / "fragmentation.svg")
    # The column figure is printed 3.3 in wide, the page one 7 in (200 dpi; tight bounding box).
    assert png_width(out / "sweep_metrics_column.png") <= 3.4 * 200
    assert png_width(out / "sweep_metrics.png") >= 6.5 * 200
    cdf = axis_texts(out / "sweep_latency_cdf.svg")
    assert {"orca-max", "orca-pow2", "orca-oracle", "vllm", "0.05", "0.1"} <= cdf  # TPOT on a log axis


def test_cli_writes_one_size_on_request(tmp_path):
    write_sweep(tmp_path, 2, [16])
    plot.main([str(tmp_path), "--format", "png", "--size", "column"])
    assert (tmp_path / "sweep_metrics_column.png").exists() and not (tmp_path / "sweep_metrics.png").exists()
    with pytest.raises(plot.PlotError, match="--size poster"):
        plot.plot(str(tmp_path), None, ["png"], ["poster"])
