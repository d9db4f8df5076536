"""The heterogeneous-KV report (experiments/heterogeneous_kv/): published numbers (paper.py),
memory arithmetic over pagesim's layer groups (memory.py) and the report's text (render.py)."""
