"""JSON, markdown and PNG for the DataLoader benchmark: best/median/worst round, ceiling, CPU."""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path
from typing import Any

from bench.dataloader.runner import Epoch

OURS = "taco_gdal"
REFERENCE = "tacoreader+rasterio"


def ceiling(workers: int, delay_s: float, gets_per_sample: float = 1.0) -> float:
    """Latency-bound samples/s: each worker (or the main process) waits ``delay`` per GET."""
    return max(workers, 1) / (delay_s * max(gets_per_sample, 1.0))


def summarise(epochs: list[Epoch], delay_s: float) -> list[dict[str, Any]]:
    """One row per (size, loop, workers): best, median and worst round and the derived figures."""
    groups: dict[tuple[int, str, int], list[Epoch]] = {}
    for e in epochs:
        groups.setdefault((e.pixels, e.loop, e.workers), []).append(e)
    rows = []
    for (pixels, loop, workers), runs in sorted(groups.items()):
        best = max(runs, key=lambda e: e.samples_per_s)
        worst = min(runs, key=lambda e: e.samples_per_s)
        median = statistics.median(e.samples_per_s for e in runs)
        limit = ceiling(workers, delay_s)
        rows.append(
            {
                "pixels": pixels,
                "loop": loop,
                "workers": workers,
                "rounds_samples_per_s": [round(e.samples_per_s, 1) for e in runs],
                "rounds_load_1min": [round(e.load_1min, 1) for e in runs],
                "best_samples_per_s": best.samples_per_s,
                "worst_samples_per_s": worst.samples_per_s,
                "median_samples_per_s": median,
                "median_of_ceiling": median / limit,
                "loader_cpu_ms_per_sample": statistics.median(
                    e.loader_cpu_ms_per_sample for e in runs
                ),
                "server_cpu_ms_per_sample": statistics.median(
                    e.server_cpu_ms_per_sample for e in runs
                ),
                "requests_per_sample": max(e.requests_per_sample for e in runs),
                "gets_per_sample": max(e.gets_per_sample for e in runs),
                "bytes_per_sample": max(e.bytes_per_sample for e in runs),
                "sample_bytes": best.sample_bytes,
                "ceiling_1_get": limit,
                "ceiling_own_gets": ceiling(workers, delay_s, best.gets_per_sample),
                "best_of_ceiling": best.samples_per_s / limit,
                "worst_of_ceiling": worst.samples_per_s / limit,
                "warmup_requests": max(e.warmup_requests for e in runs),
            }
        )
    for r in rows:
        ours = groups[(r["pixels"], r["loop"], r["workers"])]
        ref = groups.get((r["pixels"], REFERENCE, r["workers"]))
        if r["loop"] != REFERENCE and ref is not None:
            # the two loops ran back to back in each round: compare within a round
            paired = [a.samples_per_s / b.samples_per_s for a, b in zip(ours, ref, strict=False)]
            r["rounds_vs_reference"] = [round(x, 2) for x in paired]
            r["best_vs_reference"] = max(paired)
            r["worst_vs_reference"] = min(paired)
            r["median_vs_reference"] = statistics.median(paired)
    return rows


def checks(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        if r["loop"] != OURS or r["workers"] != 8 or "worst_vs_reference" not in r:
            continue
        size = f"{r['sample_bytes'] / 1e3:.0f} KB samples"
        out[f"{size}: >= 3x the reference loop at 8 workers (worst round)"] = {
            "pass": r["worst_vs_reference"] >= 3.0,
            "value": f"worst {r['worst_vs_reference']:.2f}x, median "
            f"{r['median_vs_reference']:.2f}x, best {r['best_vs_reference']:.2f}x",
        }
        out[f"{size}: >= 70% of the latency-bound ceiling at 8 workers (worst round)"] = {
            "pass": r["worst_of_ceiling"] >= 0.70,
            "value": f"worst {r['worst_of_ceiling']:.0%}, median {r['median_of_ceiling']:.0%}, "
            f"best {r['best_of_ceiling']:.0%}",
        }
    return out


def markdown(rows: list[dict[str, Any]], setup: dict[str, Any], found: dict[str, Any]) -> str:
    lines = [
        "# DataLoader epoch: taco_gdal SampleDataset vs tacoreader + rasterio",
        "",
        f"Command: `{setup['command']}`  ",
        f"{setup['samples']} samples per dataset (GeoTIFF, 4 bands uint16, uncompressed, "
        f"128x128 tiles; sizes {', '.join(str(p) for p in setup['pixels'])} px) in TACO ZIPs "
        f"written by taco_gdal, one local Range server on 127.0.0.1 with {setup['delay_ms']:.0f}"
        f" ms delay per request; batch size {setup['batch_size']}, fork workers; GDAL "
        f"{setup['gdal']}, torch {setup['torch']}; {setup['cpus']} CPUs shared with other work "
        f"(load average {setup['load_average'][0]} before, {setup['load_average'][1]} after).  ",
        "Each measurement: persistent workers read the first half of the samples (warm-up), "
        "then the timed epoch reads the second half (samples no worker has read), both in a "
        "seeded shuffled order as a training loop reads.  "
        f"{setup['repeat']} rounds, interleaved (round > size > workers > loop); best, median and "
        "worst round shown; the ratio to the reference is taken within each round (the loops ran "
        "back to back), best, median and worst of those.  Ceiling = max(workers, 1) / delay, the "
        "rate if every sample cost exactly one request and nothing else took time.  CPU ms/sample "
        "(median round): the loader's processes (main + workers) and the server process, from "
        "/proc over the timed half; unlike samples/s it does not depend on the machine's load.",
        "",
    ]
    header = (
        "| loop | workers | samples/s best / median / worst | % of ceiling best / median / "
        "worst | vs reference best / median / worst | requests (GETs) per sample | "
        "bytes/sample vs size | CPU ms/sample loader + server | ceiling (own GETs) |"
    )
    for pixels in setup["pixels"]:
        subset = [r for r in rows if r["pixels"] == pixels]
        if not subset:
            continue
        lines += [f"## {pixels} x {pixels} px ({subset[0]['sample_bytes'] / 1e3:.0f} KB)", ""]
        lines += [header, "|---|---|---|---|---|---|---|---|---|"]
        for r in subset:
            ratio = (
                f"{r['best_vs_reference']:.2f}x / {r['median_vs_reference']:.2f}x / "
                f"{r['worst_vs_reference']:.2f}x"
                if "best_vs_reference" in r
                else "-"
            )
            lines.append(
                f"| {r['loop']} | {r['workers']} | {r['best_samples_per_s']:.1f} / "
                f"{r['median_samples_per_s']:.1f} / {r['worst_samples_per_s']:.1f} | "
                f"{r['best_of_ceiling']:.0%} / {r['median_of_ceiling']:.0%} / "
                f"{r['worst_of_ceiling']:.0%} | {ratio} | {r['requests_per_sample']:.2f} "
                f"({r['gets_per_sample']:.2f}) | {r['bytes_per_sample'] / 1e3:.0f} KB "
                f"({r['bytes_per_sample'] / r['sample_bytes'] - 1:+.1%}) | "
                f"{r['loader_cpu_ms_per_sample']:.2f} + {r['server_cpu_ms_per_sample']:.2f} | "
                f"{r['ceiling_1_get']:.0f} ({r['ceiling_own_gets']:.0f}) |"
            )
        lines.append("")
        for r in subset:
            rounds = ", ".join(
                f"{v:.0f} (load {load:.1f})"
                for v, load in zip(r["rounds_samples_per_s"], r["rounds_load_1min"], strict=True)
            )
            lines.append(f"* {r['loop']}, {r['workers']} workers, samples/s by round: {rounds}")
        lines.append("")
    lines += ["Targets:", ""]
    for text, ok in found.items():
        lines.append(f"* {'PASS' if ok['pass'] else 'FAIL'}: {text} ({ok['value']})")
    lines += ["", "Notes:", ""] + [f"* {note}" for note in setup["notes"]]
    return "\n".join(lines) + "\n"


def _plot_rounds(ax: Any, subset: list[dict[str, Any]]) -> None:
    """One worker count: every round of every loop as a point, the median as a bar."""
    loops = list(dict.fromkeys(r["loop"] for r in subset))
    for x, loop in enumerate(loops):
        r = next(r for r in subset if r["loop"] == loop)
        ax.bar(x, r["median_samples_per_s"], width=0.6, alpha=0.35)
        rounds = r["rounds_samples_per_s"]
        ax.scatter([x] * len(rounds), rounds, color="black", s=12, zorder=3)
    limit = subset[0]["ceiling_1_get"]
    ax.axhline(limit, linestyle="--", color="grey", label="ceiling: workers / latency")
    ax.axhline(0.7 * limit, linestyle=":", color="grey", label="70% of the ceiling")
    ax.set_xticks(range(len(loops)))
    ax.set_xticklabels(loops, fontsize=8)
    ax.set_ylabel("samples/s (bar: median round, dots: every round)")
    ax.set_title(
        f"{subset[0]['pixels']} px samples ({subset[0]['sample_bytes'] / 1e3:.0f} KB), "
        f"{subset[0]['workers']} workers"
    )
    ax.legend(fontsize=8)


def plot(rows: list[dict[str, Any]], setup: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [p for p in setup["pixels"] if any(r["pixels"] == p for r in rows)]
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.2), squeeze=False)
    for ax, pixels in zip(axes[0], sizes, strict=True):
        subset = [r for r in rows if r["pixels"] == pixels]
        workers = sorted({r["workers"] for r in subset})
        if len(workers) == 1:
            _plot_rounds(ax, subset)
            continue
        for loop in dict.fromkeys(r["loop"] for r in subset):
            mine = {r["workers"]: r for r in subset if r["loop"] == loop}
            if not mine:  # a run of one loop only (--loops)
                continue
            best = [mine[w]["best_samples_per_s"] for w in workers]
            worst = [mine[w]["worst_samples_per_s"] for w in workers]
            ax.plot(workers, best, marker="o", label=f"{loop} (best)")
            ax.fill_between(workers, worst, best, alpha=0.2)
        limit = [
            subset[0]["ceiling_1_get"] / max(subset[0]["workers"], 1) * max(w, 1) for w in workers
        ]
        ax.plot(workers, limit, linestyle="--", color="grey", label="ceiling: workers / latency")
        ax.set_xticks(workers)
        ax.set_xlabel("DataLoader workers")
        ax.set_ylabel("samples/s")
        ax.set_title(f"{pixels} px samples ({subset[0]['sample_bytes'] / 1e3:.0f} KB)")
        ax.legend(fontsize=8)
    fig.suptitle(f"DataLoader epoch, local server with {setup['delay_ms']:.0f} ms per request")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(out: Path, stem: str, epochs: list[Epoch], setup: dict[str, Any], delay_s: float) -> str:
    rows = summarise(epochs, delay_s)
    found = checks(rows)
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(rows, setup, found)
    payload = {
        "setup": setup,
        "rows": rows,
        "checks": found,
        "epochs": [dataclasses.asdict(e) for e in epochs],
    }
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (out / f"{stem}.md").write_text(text)
    plot(rows, setup, out / f"{stem}.png")
    return text
