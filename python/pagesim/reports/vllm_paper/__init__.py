"""The vLLM-paper reproduction report (experiments/vllm_paper): paper.py holds the paper's
numbers (the one copy), judge.py the pure verdicts and targets, render.py writes REPORT.md's
sections and figures; results are read by pagesim.reports.load. Run as
`python -m pagesim.reports.vllm_paper RESULTS_DIR DEST_DIR`."""
