"""Regenerates docs/gallery.md and its images: every figure `pagesim plot` and `pagesim compare`
draw, from bundled experiments (a few seconds each; the cluster run shortened to 100 requests).

  bash .ci/python docs/gallery/make_gallery.py [PAGESIM]      (default: $PAGESIM, else build/pagesim)

The images are the plots' own PNGs, scaled to half (page width) or three quarters (column
width) and reduced to a 128-colour palette, so the gallery stays a few hundred KB; the
figures `pagesim plot` writes are at full resolution. Same binary and results, same files."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "docs" / "gallery"
EXP = REPO / "experiments"

# (name, experiment, extra arguments, what it shows)
RUNS = [
    ("fig2", EXP / "vllm_paper" / "fig2.yaml", [], "the vLLM paper's Fig. 2: four systems as cases"),
    ("fig2_3rps", EXP / "vllm_paper" / "fig2.yaml", ["--set", "workload.arrival.rate=3"], "Fig. 2 at 3 req/s"),
    ("block_size", EXP / "vllm_paper" / "ablation_block_size.yaml", [], "block sizes 1 ... 256: a numeric sweep"),
    ("preemption", EXP / "vllm_paper" / "ablation_preemption.yaml", [], "preemption x block size: two keys"),
    ("routers", EXP / "cluster" / "routers_azure.yaml", [], "four routers: a categorical sweep"),
    ("single", EXP / "bench" / "azure_conv_vllm.yaml",
     ["--set", "output.iterations_stride=1", "--set", "output.requests_csv=true", "--set", "measure.window_start_s=600",
      "--set", "measure.window_end_s=3000"], "a single run, measured over 600-3000 s"),
    ("cluster", EXP / "cluster" / "mooncake_10x3m.yaml",
     ["--set", "workload.max_requests=100", "--set", "replicas.count=3", "--set", "output.iterations_stride=1",
      "--set", "output.requests_csv=true"], "a 3-replica cluster run"),
]

# (section, image stem in the gallery, source folder, figure stem, command, what it shows)
FIGURES = [
    ("Fig. 2 beside the paper: `memory_bars`", "fig2", "memory_bars", "pagesim plot out/fig2",
     "Drawn for the bundled Fig. 2 experiment: pagesim's classes (solid) beside the paper's published numbers "
     "(hatched; its last class is pagesim's rounding + free)."),
    ("Memory classes over time per point: `fragmentation`", "fig2", "fragmentation", "pagesim plot out/fig2",
     "A sweep of up to 8 points with iterations.csv; outside the measurement window faded."),
    ("Metrics against cases: `sweep_metrics`", "routers", "sweep_metrics", "pagesim plot out/routers",
     "No numeric key: a bar per point, named in words (router names as papers write them)."),
    ("Metrics against a numeric key: `sweep_metrics`", "block_size", "sweep_metrics", "pagesim plot out/block_size",
     "Ticked at every swept value; powers of two on a log2 axis labelled 1, 2, 4 ... 256."),
    ("Several lines: `sweep_metrics`", "preemption", "sweep_metrics", "pagesim plot out/preemption",
     "A line per value of the other key, each with its own colour, marker and line style."),
    ("Memory classes per point: `sweep_memory`", "fig2", "sweep_memory", "pagesim plot out/fig2",
     "Window averages, every bar to 100%."),
    ("Latency CDFs per point: `sweep_latency_cdf`", "fig2", "sweep_latency_cdf", "pagesim plot out/fig2",
     "Log axes past a decade; the three Orca TPOT curves coincide and stay visible by marker and style."),
    ("Ordered points: `sweep_latency_cdf`", "block_size", "sweep_latency_cdf", "pagesim plot out/block_size",
     "Ordered values in an ordered (sequential) palette."),
    ("A single run: `memory_over_time`", "single", "memory_over_time", "pagesim plot out/single",
     "The classes over simulated time; outside the measurement window faded."),
    ("A single run: `latency_cdf`", "single", "latency_cdf", "pagesim plot out/single", "TTFT, TPOT, end-to-end and "
     "normalized latency."),
    ("A cluster run: `memory_over_time`", "cluster", "memory_over_time", "pagesim plot out/cluster",
     "Per replica, its token states and its waiting queue."),
    ("Two results compared: `compare_metrics`", "compare", "compare_metrics",
     "pagesim compare out/fig2 out/fig2_3rps --out out/compare", "A bar per source, grouped by point."),
    ("Two results compared: `compare_latency_cdf`", "compare", "compare_latency_cdf",
     "pagesim compare out/fig2 out/fig2_3rps --out out/compare", "A line per source and point."),
]
COLUMN_TOO = {"memory_bars", "sweep_latency_cdf", "sweep_metrics"}  # shown at both widths


def shrink(src, dest, scale):
    """src scaled by `scale`, as a 128-colour PNG at dest."""
    with Image.open(src) as im:
        im = im.convert("RGB")
        im = im.resize((round(im.width * scale), round(im.height * scale)), Image.LANCZOS)
        im.quantize(colors=128, method=Image.MEDIANCUT, dither=Image.NONE).save(dest, optimize=True)


def main():
    pagesim = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PAGESIM", str(REPO / "build" / "pagesim"))
    sys.path.insert(0, str(REPO / "python"))
    from pagesim import plot
    from pagesim.compare import compare

    work = Path(tempfile.mkdtemp(prefix="pagesim-gallery-"))
    try:
        for name, exp, extra, _ in RUNS:
            subprocess.run([pagesim, "run", str(exp), "--out", str(work / name), "-q", *extra], cwd=REPO, check=True,
                           stdout=subprocess.DEVNULL)
            if name != "fig2_3rps":
                plot.plot(str(work / name), None, ["png"])
        c = compare(work / "fig2", work / "fig2_3rps", names=["4 req/s", "3 req/s"])
        c.plot(work / "compare", ["png"])
        for old in HERE.glob("*.png"):
            old.unlink()
        lines = ["# Gallery", "",
                 "Every figure `pagesim plot` and `pagesim compare --out` draw, from bundled experiments. Each is "
                 "written at two printed widths: `NAME.png` 7 in (a page-wide figure) and `NAME_column.png` 3.3 in "
                 "(one column), as PNG, SVG or PDF (`--format`). Images here are reduced copies; regenerate them "
                 "with `bash .ci/python docs/gallery/make_gallery.py` (a minute).", "",
                 "The runs: " + "; ".join(f"`{n}`: {exp.relative_to(REPO)}{' ' + ' '.join(x) if x else ''} ({why})"
                                          for n, exp, x, why in RUNS) + ".", ""]
        for section, folder, stem, command, what in FIGURES:
            lines += [f"## {section}", "", f"`{command}` — {what}", ""]
            for suffix, scale in (("", 0.5), ("_column", 0.75)):
                if suffix and stem not in COLUMN_TOO:
                    continue
                src = work / folder / f"{stem}{suffix}.png"
                if not src.exists():
                    continue
                dest = f"{folder}_{stem}{suffix}.png"
                shrink(src, HERE / dest, scale)
                lines += [f"![{stem}{suffix} of {folder}](gallery/{dest})", ""]
        (REPO / "docs" / "gallery.md").write_text("\n".join(lines))
    finally:
        shutil.rmtree(work)
    total = sum(p.stat().st_size for p in HERE.glob("*.png"))
    print(f"wrote docs/gallery.md and {len(list(HERE.glob('*.png')))} images ({total // 1024} KB)")


if __name__ == "__main__":
    main()
