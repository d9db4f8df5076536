"""The cluster report's text and figures, from ClusterResults (cluster_report/results.py).

report() returns the Markdown lines and writes the figures (PNG and SVG) into a folder. Every
number in the text comes from the results, except the paper's, which come from paper.py.
"""
import dataclasses
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pagesim.reports.cluster import paper  # noqa: E402
from pagesim.reports.cluster.results import GLOBAL_RUNS, TIER_RUNS  # noqa: E402

ROUTERS = ("round_robin", "least_outstanding", "least_kv", "random")
GIB = float(1 << 30)


@dataclasses.dataclass
class Report:
    lines: list


def _save(fig, figs, stem):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(figs, f"{stem}.{ext}"), dpi=110, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else {})
    plt.close(fig)


def _pct(x):
    return f"{100 * x:.2f}%"


def _global_section(res, figs):
    rows = []
    for folder, label in GLOBAL_RUNS:
        s = res.summary(folder)
        v = lambda k, f=folder: res.value(f, k)  # noqa: E731
        prompt, hit = v("prefix_cache.prompt_tokens"), v("prefix_cache.hit_tokens")
        remote = v("cluster.global_cache.remote_hit_tokens") if "global_cache" in s["cluster"] else 0.0
        rows.append(dict(label=label, hit=hit / prompt, remote=remote / prompt, local=(hit - remote) / prompt,
                         computed=(prompt - hit) / v("requests_finished"), ttft_mean=v("ttft_s.mean"),
                         ttft_p99=v("ttft_s.p99"),
                         fetched=v("cluster.global_cache.fetched_bytes") / GIB if remote else 0.0,
                         fetch_s=v("cluster.global_cache.fetch_s") if remote else 0.0,
                         balance=v("cluster.load_balance.requests.max_over_mean"),
                         requests=v("requests_finished")))
    by = {r["label"]: r for r in rows}
    rr_l, rr_g = by[GLOBAL_RUNS[0][1]], by[GLOBAL_RUNS[1][1]]
    pa_l, pa_g, pool = by[GLOBAL_RUNS[2][1]], by[GLOBAL_RUNS[3][1]], by[GLOBAL_RUNS[4][1]]
    out = ["## (a) Local caches against a global cache (Mooncake Fig. 10's setting)", "",
           f"The bundled Mooncake conversation trace in full ({rows[0]['requests']:,.0f} requests) on 10 replicas "
           "(Llama-3-8B, two H200s each, roofline) whose prefix caches hold 3M tokens each "
           "(`mooncake_10x3m.yaml`). *Local*: a replica hits only its own cache. *Global (peers)*: a replica "
           "also fetches the leading prompt blocks another replica holds, over 200 Gbit/s with 20 µs per "
           "fetch (`replicas.global_cache`). *Shared pool 30M*: one cluster-wide pool as large as the ten "
           "caches together (3,662 GiB), written by every prefill. Hit rate: prompt tokens served from a "
           "cache at a request's first admission ÷ all prompt tokens (local + fetched). Computed: prompt "
           "tokens each request still prefilled, the prefill work.", "",
           "| configuration | hit rate | of it fetched | prompt tokens computed / request | TTFT mean | TTFT p99 "
           "| fetched | fetch time | routed max/mean |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['label']} | {_pct(r['hit'])} | {_pct(r['remote'])} | {r['computed']:,.0f} | "
                   f"{r['ttft_mean']:.3f} s | {r['ttft_p99']:.3f} s | {r['fetched']:,.1f} GiB | {r['fetch_s']:.2f} s | "
                   f"{r['balance']:.2f} |")
    out += ["", "![Local against global cache](figures/global_cache.png)", "",
            "What the runs show:", "",
            f"- **Round robin**: the global cache raises the hit rate from {_pct(rr_l['hit'])} to {_pct(rr_g['hit'])} "
            f"({rr_g['hit'] / rr_l['hit']:.2f}x) and cuts the prompt tokens computed per request from "
            f"{rr_l['computed']:,.0f} to {rr_g['computed']:,.0f} ({100 * (1 - rr_g['computed'] / rr_l['computed']):.0f}% "
            f"less prefill work); TTFT mean {rr_l['ttft_mean']:.3f} s → {rr_g['ttft_mean']:.3f} s, the fetches adding "
            f"{rr_g['fetch_s']:.1f} s over the run. A conversation's turns land on different replicas, so a "
            "local cache rarely holds the previous turn; a global one does.",
            f"- **prefix_aware** keeps a conversation on the replica caching it, so local caches already reach "
            f"{_pct(pa_l['hit'])}; fetching from peers adds {_pct(pa_g['remote'])} (to {_pct(pa_g['hit'])}). The "
            f"price is load: the busiest replica gets {pa_l['balance']:.2f}x the mean of requests, and TTFT mean "
            f"is {pa_l['ttft_mean']:.3f} s against round robin's {rr_l['ttft_mean']:.3f} s.",
            f"- **Capacity, not reach, limits prefix_aware**: the peers' caches hold what the router already "
            f"brought home; a shared pool of the ten caches' combined size (blocks stored once, not once per "
            f"replica) reaches {_pct(pool['hit'])} ({_pct(pool['remote'])} fetched). Round robin with peers "
            f"({_pct(rr_g['hit'])}) comes close to that without the load imbalance: the best TTFT here.", "",
            "### Beside the paper", "",
            f"{paper.PAPER}, Fig. 10, compares these two designs on this trace: {paper.SETUP}. The figure "
            "prints the global cache's values as multiples of the local cache's (its bars carry no numbers); "
            f"for the conversation trace ({paper.SOURCE}):", "",
            "| conversation trace, 10 × 3M tokens | hit rate, global ÷ local | prefill work, global ÷ local |",
            "|---|---|---|",
            f"| Mooncake, Fig. 10 (prefill GPU time) | {paper.FIG10_CONVERSATION['hit_rate_global_over_local']:.2f}x "
            f"| {paper.FIG10_CONVERSATION['prefill_time_global_over_local']:.2f}x |"]
    for name, local, glob in (("prefix_aware, peers", pa_l, pa_g), ("prefix_aware, shared pool 30M", pa_l, pool),
                              ("round_robin, peers", rr_l, rr_g)):
        out.append(f"| pagesim {name} (prompt tokens computed) | {glob['hit'] / local['hit']:.2f}x | "
                   f"{glob['computed'] / local['computed']:.2f}x |")
    out += ["", f"Why they differ: the paper's local baseline routes by prefix match like prefix_aware here, "
            f"and its Fig. 9 puts a 3M-token cache at {100 * paper.FIG9_CONVERSATION_3M_OF_MAX:.0f}% of the "
            "conversation trace's theoretical maximum hit rate; its global cache reads every node's cache and "
            "migrates blocks ahead of use, so it comes close to one 30M-token pool. pagesim's peers fetch only "
            "what another replica happens to hold at admission, and behind prefix_aware that is what the "
            f"router already brought home ({pa_g['hit'] / pa_l['hit']:.2f}x); the shared pool is the closer "
            f"analogue ({pool['hit'] / pa_l['hit']:.2f}x), and round robin, which scatters a conversation's "
            f"turns, shows the paper's size of gain ({rr_g['hit'] / rr_l['hit']:.2f}x). A larger gain than "
            "prefix_aware's also fits a local baseline that spreads turns more: Conductor weighs load with the "
            f"prefix match, where prefix_aware here lets the busiest replica take {pa_l['balance']:.2f}x the mean "
            "(the paper prints no absolute hit rates to check this against). "
            "Prefill work: the paper measures GPU time of a LLaMA3-70B-like model on A800s, pagesim counts "
            "prompt tokens still computed (Llama-3-8B on H200s, roofline); the tokens still computed are a "
            "prompt's later ones, which attend to the whole cached prefix, so a ratio of tokens overstates the "
            "time saved on long prompts. "
            "Mooncake Store's DRAM/SSD levels and hot-block replicas are not modelled (the pool models capacity "
            "only). The direction is the paper's: a global cache recovers hits that 3M-token local caches lose.",
            "", "Also found:", ""]
    out += [f"- {f}" for f in paper.FOUND]
    out += [""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    labels = [r["label"].replace(", ", ",\n").replace(" (", "\n(") for r in rows]
    x = range(len(rows))
    ax1.bar(x, [100 * r["local"] for r in rows], label="local hits")
    ax1.bar(x, [100 * r["remote"] for r in rows], bottom=[100 * r["local"] for r in rows], label="fetched (global)")
    ax1.set_ylabel("prompt tokens hit (%)")
    ax1.legend(fontsize=8)
    ax2.bar(x, [r["ttft_mean"] for r in rows], color="tab:gray")
    ax2.set_ylabel("TTFT mean (s)")
    for ax in (ax1, ax2):
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7)
    fig.suptitle("Mooncake conversation trace, 10 replicas x 3M tokens")
    _save(fig, figs, "global_cache")
    return out


def _tier_section(res, figs):
    rows = []
    for folder, label, cpu, disk, overlap in TIER_RUNS:
        s = res.summary(folder)
        v = lambda k, f=folder: res.value(f, k)  # noqa: E731
        t = "tiers" in s
        rows.append(dict(label=label, cpu=cpu, disk=disk, overlap=overlap, hit=v("prefix_hit_rate"),
                         cpu_hit=v("tiers.cpu.hit_rate") if t else 0.0, disk_hit=v("tiers.disk.hit_rate") if t else 0.0,
                         ttft_mean=v("ttft_s.mean"), ttft_p50=v("ttft_s.p50"), ttft_p99=v("ttft_s.p99"),
                         transfer=v("tiers.transfer_s") if t else 0.0, saved=v("tiers.prefill_saved_s") if t else 0.0))
    out = ["## (b) CPU and disk tiers on multi-turn sessions", "",
           "Chat sessions (`tiers_sessions.yaml`: 1 session a second for 10 minutes, 1-8 turns a minute apart, "
           "three shared 1,024-token system prompts) on one Llama-3-8B H200 with a 32,768-slot GPU pool, so turns "
           "find their context evicted; offload tiers below it (write_back; CPU 25 GB/s, disk 5 GB/s read and "
           "2 GB/s write). Hit rate: first admissions' prompt tokens served by the GPU cache or a tier. Transfer: "
           "time the tiers' loads and stores added to iterations; saved: prefill time saved net of it (negative: "
           "the transfers cost more than recomputing).", "",
           "| tiers | hit rate | of it CPU | of it disk | TTFT mean | TTFT p50 | TTFT p99 | transfer | saved |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['label']} | {_pct(r['hit'])} | {_pct(r['cpu_hit'])} | {_pct(r['disk_hit'])} | "
                   f"{r['ttft_mean']:.3f} s | {r['ttft_p50']:.3f} s | {r['ttft_p99']:.3f} s | {r['transfer']:.1f} s | "
                   f"{r['saved']:.1f} s |")
    gpu = rows[0]
    serial = [r for r in rows if r["cpu"] and not r["disk"] and not r["overlap"]]
    over = next(r for r in rows if r["overlap"])
    same = next(r for r in serial if r["cpu"] == over["cpu"])
    out += ["", "![Tiers](figures/tiers.png)", "",
            f"The hit rate grows with the CPU tier, from {_pct(gpu['hit'])} (GPU only) to {_pct(serial[-1]['hit'])} at "
            f"{serial[-1]['cpu']} GiB, and a disk tier under a 4 GiB CPU tier adds more. TTFT follows only where the "
            "loads save more prefill than the transfers cost: with write_back, every block the GPU evicts is "
            "stored into the first tier on the iteration's critical path (`overlap: false`, the default). "
            f"Tiers with a net loss (saved < 0): {', '.join(r['label'] for r in rows[1:] if r['saved'] < 0) or 'none'}; "
            f"with a net gain: {', '.join(r['label'] for r in rows[1:] if r['saved'] > 0) or 'none'}. "
            f"TTFT mean: GPU only {gpu['ttft_mean']:.3f} s, {same['label']} {same['ttft_mean']:.3f} s, the same "
            f"overlapped with compute (`overlap: true`) {over['ttft_mean']:.3f} s (net saving {over['saved']:.1f} s "
            f"against {same['saved']:.1f} s serial).", ""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    caps = [r["cpu"] for r in serial]
    ax1.plot(caps, [100 * r["hit"] for r in serial], "o-", label="CPU tier (serial)")
    disks = [r for r in rows if r["disk"]]
    ax1.plot([r["disk"] for r in disks], [100 * r["hit"] for r in disks], "s--", label="CPU 4 GiB + disk tier")
    ax1.axhline(100 * gpu["hit"], color="gray", ls=":", label="GPU only")
    ax1.scatter([over["cpu"]], [100 * over["hit"]], marker="x", color="k", zorder=3, label="CPU 16 GiB, overlapped")
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("tier capacity (GiB)")
    ax1.set_ylabel("hit rate (%)")
    ax1.legend(fontsize=7)
    ax2.plot(caps, [r["ttft_mean"] for r in serial], "o-", label="CPU tier (serial)")
    ax2.plot([r["disk"] for r in disks], [r["ttft_mean"] for r in disks], "s--", label="CPU 4 GiB + disk tier")
    ax2.axhline(gpu["ttft_mean"], color="gray", ls=":", label="GPU only")
    ax2.scatter([over["cpu"]], [over["ttft_mean"]], marker="x", color="k", zorder=3, label="CPU 16 GiB, overlapped")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("tier capacity (GiB)")
    ax2.set_ylabel("TTFT mean (s)")
    fig.suptitle("Offload tiers, sessions workload")
    _save(fig, figs, "tiers")
    return out


def _router_section(res, figs):
    folder = "c_routers"
    rows = []
    for row in res.sweep(folder):
        n = lambda c, r=row: res.sweep_value(folder, r, c)  # noqa: E731
        rows.append(dict(router=row["replicas.router"], p50=n("ttft_s.p50"), p99=n("ttft_s.p99"),
                         rps=n("throughput_rps"), tps=n("throughput_tokens_per_s"), goodput=n("slo.goodput_rps"),
                         attain=n("slo.attainment"), balance=n("cluster.load_balance.requests.max_over_mean"),
                         preempt=n("preemptions")))
    best = min(rows, key=lambda r: r["p99"])
    worst = max(rows, key=lambda r: r["p99"])
    top = max(rows, key=lambda r: r["goodput"])
    out = ["## (c) Routers on the Azure conversation trace", "",
           "The Azure LLM inference 2023 conversation trace in full on 5 replicas of the bench setting "
           "(OPT-13B on an A100-40GB each, 15,728 KV slots; `routers_azure.yaml`), SLOs TTFT 1 s and mean TBT "
           "0.1 s. The trace has no token identities, so there is no prefix to route by: prefix_aware is compared "
           "in (a), on the Mooncake trace, and left out here.", "",
           "| router | TTFT p50 | TTFT p99 | throughput | tokens/s | goodput (SLO) | attainment | routed max/mean | "
           "preemptions |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r['router']}` | {r['p50']:.3f} s | {r['p99']:.2f} s | {r['rps']:.3f} req/s | {r['tps']:,.0f} | "
                   f"{r['goodput']:.3f} req/s | {_pct(r['attain'])} | {r['balance']:.3f} | {r['preempt']:,.0f} |")
    out += ["", "![Routers](figures/routers.png)", "",
            f"Every router keeps up with the trace (throughput {min(r['rps'] for r in rows):.3f}-"
            f"{max(r['rps'] for r in rows):.3f} req/s); the tail is where they differ: TTFT p99 "
            f"{best['p99']:.2f} s under `{best['router']}` against {worst['p99']:.2f} s under `{worst['router']}`, and "
            f"the most requests meet both SLOs under `{top['router']}` ({top['goodput']:.3f} req/s, "
            f"{_pct(top['attain'])}). `least_outstanding` balances queues, `least_kv` free memory, round robin "
            "and random neither.", ""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
    x = range(len(rows))
    ax1.bar(x, [r["p99"] for r in rows])
    ax1.set_ylabel("TTFT p99 (s)")
    ax2.bar(x, [r["goodput"] for r in rows], color="tab:green")
    ax2.set_ylabel("goodput (req/s meeting both SLOs)")
    for ax in (ax1, ax2):
        ax.set_xticks(list(x))
        ax.set_xticklabels([r["router"] for r in rows], fontsize=7, rotation=20)
    fig.suptitle("Routers, Azure conversation trace, 5 replicas")
    _save(fig, figs, "routers")
    return out


def _disagg_section(res, figs):
    series = {}
    for folder, name in (("d_colocated", "co-located 4"), ("d_disaggregated", "2 prefill + 2 decode")):
        pts = []
        for row in res.sweep(folder):
            n = lambda c, r=row: res.sweep_value(folder, r, c)  # noqa: E731
            pts.append(dict(rate=1.0 / n("workload.trace.time_scale"), ttft50=n("ttft_s.p50"), ttft99=n("ttft_s.p99"),
                            tbt50=n("tpot_s.p50"), tbt99=n("tpot_s.p99"), rps=n("throughput_rps"),
                            goodput=n("slo.goodput_rps"), preempt=n("preemptions")))
        series[name] = sorted(pts, key=lambda p: p["rate"])
    out = ["## (d) Disaggregated against co-located at equal GPU count", "",
           "4 replicas of the bench setting on the Azure conversation trace (`disagg_azure.yaml`), its arrivals "
           "replayed faster or slower (rate = 1 / `workload.trace.time_scale`, 1 = the trace's own): all four "
           "co-located (least_outstanding), or 2 prefill + 2 decode replicas with the KV moving over 200 Gbit/s "
           "(20 µs). TBT: per request, (finish − first token) / (output − 1) (vLLM's TPOT); its p50 and p99 "
           "over requests.", "",
           "| rate (x trace) | cluster | TTFT p50 | TTFT p99 | TBT p50 | TBT p99 | throughput | goodput (SLO) | "
           "preemptions |", "|---|---|---|---|---|---|---|---|---|"]
    for name, pts in series.items():
        for p in pts:
            out.append(f"| {p['rate']:.2f} | {name} | {p['ttft50']:.3f} s | {p['ttft99']:.3f} s | "
                       f"{1000 * p['tbt50']:.1f} ms | {1000 * p['tbt99']:.1f} ms | {p['rps']:.3f} req/s | "
                       f"{p['goodput']:.3f} req/s | {p['preempt']:,.0f} |")
    co, dis = series["co-located 4"], series["2 prefill + 2 decode"]
    low_co, low_dis = co[0], dis[0]
    out += ["", "![Disaggregation](figures/disaggregation.png)", "",
            f"At the lowest rate ({low_co['rate']:.2f}x) disaggregation gives TTFT p50 {low_dis['ttft50']:.3f} s "
            f"against co-located {low_co['ttft50']:.3f} s (a prefill replica never batches decodes) and TBT p50 "
            f"{1000 * low_dis['tbt50']:.1f} ms against {1000 * low_co['tbt50']:.1f} ms (two decode replicas carry the "
            "decode batches four share). As the rate grows, the two decode replicas' 15,728-slot pools are the "
            "first to fill: hand-offs wait for decode memory and decodes are preempted (the preemptions column), "
            "so TTFT and TBT tails rise at a lower rate than co-located, which sustains the higher throughput "
            f"({co[-1]['rps']:.3f} against {dis[-1]['rps']:.3f} req/s at {co[-1]['rate']:.2f}x). With equal GPUs and "
            "pools this small, decode memory, not prefill interference, limits the split; it pays off where the "
            "decode side has the memory (DistServe sizes the two pools apart).", ""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, pts in series.items():
        ax1.plot([p["rate"] for p in pts], [p["ttft99"] for p in pts], "o-", label=f"{name} p99")
        ax1.plot([p["rate"] for p in pts], [p["ttft50"] for p in pts], "o:", label=f"{name} p50")
        ax2.plot([p["rate"] for p in pts], [1000 * p["tbt99"] for p in pts], "o-", label=f"{name} p99")
        ax2.plot([p["rate"] for p in pts], [1000 * p["tbt50"] for p in pts], "o:", label=f"{name} p50")
    ax1.set_yscale("log")
    ax1.set_ylabel("TTFT (s)")
    ax2.set_yscale("log")
    ax2.set_ylabel("TBT (ms)")
    for ax in (ax1, ax2):
        ax.set_xlabel("arrival rate (x the trace's)")
        ax.legend(fontsize=7)
    fig.suptitle("Disaggregated vs co-located, 4 GPUs, Azure conversation trace")
    _save(fig, figs, "disaggregation")
    return out


def report(res, figs, commit, date):
    """The report for ClusterResults `res`; figures go to folder `figs` (which must exist)."""
    lines = ["# Clusters: global cache, offload tiers, routers, disaggregation", "",
             f"Generated by `experiments/cluster/run_all.sh` (pagesim commit {commit}, {date}). Do not edit by hand: "
             "rerun the script. Every run replays its whole trace or workload; pagesim numbers are simulated "
             "(roofline cost model), not measured on GPUs.", ""]
    lines += _global_section(res, figs)
    lines += _tier_section(res, figs)
    lines += _router_section(res, figs)
    lines += _disagg_section(res, figs)
    return Report(lines)
