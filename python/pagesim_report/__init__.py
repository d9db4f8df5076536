"""The vLLM-paper reproduction report of pagesim: paper.py holds the paper's numbers (the one
copy), load.py reads a results folder, judge.py holds the pure verdicts and targets, render.py
writes REPORT.md's sections and figures. python/make_report.py is the entry point."""
