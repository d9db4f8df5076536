"""sim_to_real: pagesim's latency checked against measured vLLM servers.

measured   reads a measured-runs file (shared/sim2real/measured_runs.json's schema) and checks
           that every stage holds every metric a comparison needs.
run_config turns one measured run's server and client settings into a pagesim experiment
           (the config a run of that collection needs, and nothing fitted to it).
simulate   runs such an experiment with `pagesim run` and reads its client_metrics.json.
calibrate  `pagesim calibrate`: least-squares fit of the coefficients the measured operator
           tables cannot give (host time per step and per sequence, the client's fixed time).
report     experiments/sim_to_real/REPORT.md: measured against simulated, per run, stage and
           metric, and the median absolute percentage errors beside the peers' published ones.
request_latencies  one load test request by request (`pagesim trace compare`): the latencies its
           client measured (measured_requests.csv of `pagesim trace import`) against a run of
           its trace (the run's requests.csv): TTFT, TPOT and E2E mean and percentiles.
"""
