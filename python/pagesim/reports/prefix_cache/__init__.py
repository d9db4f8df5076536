"""The prefix-cache report: experiments/prefix_cache/REPORT.md and its figures, from the results
of experiments/prefix_cache/run_all.sh (entry point: python/make_prefix_cache_report.py)."""
