"""The cluster report of experiments/cluster/run_all.sh (python/make_cluster_report.py)."""
