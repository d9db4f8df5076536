"""The reports of pagesim's experiment folders, one subpackage each, run as modules:

    python -m pagesim.reports.vllm_paper RESULTS_DIR DEST_DIR        experiments/vllm_paper
    python -m pagesim.reports.prefix_cache RESULTS_DIR DEST_DIR      experiments/prefix_cache
    python -m pagesim.reports.cluster RESULTS_DIR DEST_DIR           experiments/cluster
    python -m pagesim.reports.heterogeneous_kv RESULTS_DIR DEST_DIR  experiments/heterogeneous_kv
    python -m pagesim.reports.modern_kv RESULTS_DIR DEST_DIR         experiments/modern_kv
    python -m pagesim.reports.sim_to_real COMMAND ...                experiments/sim_to_real,
                                                                     `pagesim calibrate`

Shared by all of them: load.py reads results folders (summary.json, sweep.csv, with errors
naming the file and key: ResultsError), document.py renders (Report: Markdown lines and the
numbers outside target; save(): deterministic PNG/SVG figures; write_markdown(): REPORT.md
atomically) and runs the command line every report has (report_main). A new report is a
subpackage with the published numbers it compares with (paper.py), a render.py that turns a
results folder into a Report, and a __main__.py of a few lines calling report_main.
"""
