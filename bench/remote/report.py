"""Write the benchmark results: JSON, a markdown table and a PNG plot."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from bench.remote.runner import Run


def as_json(runs: list[Run], setup: dict[str, Any], checks: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for run in runs:
        row = dataclasses.asdict(run)
        row.update(
            samples_per_s=run.samples_per_s,
            requests_per_sample=run.requests_per_sample,
            bytes_per_sample=run.bytes_per_sample,
            overread=run.overread,
        )
        rows.append(row)
    return {"setup": setup, "runs": rows, "checks": checks}


def markdown(runs: list[Run], setup: dict[str, Any], checks: dict[str, Any]) -> str:
    lines = [
        "# Remote reads: taco_gdal vs tacoreader + rasterio vs GDAL /vsizip/",
        "",
        f"Command: `{setup['command']}`  ",
        f"{setup['samples']} samples (mean {setup['mean_sample_bytes'] / 1e6:.2f} MB GeoTIFF, "
        f"256x256x4 uint16, 128x128 tiles, compression {setup['compress']}) in "
        f"one {setup['zip_bytes'] / 1e6:.1f} MB TACO ZIP written by taco_gdal, served by one "
        f"local Range server on 127.0.0.1 with {setup['delay_ms']:.0f} ms delay per request; "
        f"GDAL {setup['gdal']}; {setup['cpus']} CPUs shared with other work (load average "
        f"{setup['load_average'][0]} before, {setup['load_average'][1]} after).  ",
        "Open + first sample: one fresh process (imports excluded).  Random samples: each worker "
        "process opens the dataset, then reads its own random samples (no repeats); "
        "requests and bytes are counted in the server's log for the random phase only.",
        "",
        f"Each configuration ran {setup['repeat']} times, rounds interleaved; the table shows "
        "the fastest round (all rounds' samples/s in brackets).",
        "",
        "| reader | workers | open + first sample (per worker): s / requests (HEAD) / KB "
        "| samples/s | requests/sample | bytes/sample vs sample size |",
        "|---|---|---|---|---|---|",
    ]
    rounds = setup["rounds_samples_per_s"]
    for run in runs:
        first = run.open_first
        per = max(1, run.workers)
        every = ", ".join(f"{v:.0f}" for v in rounds[f"{run.reader} x{run.workers}"])
        lines.append(
            f"| {run.reader} | {run.workers} | {first.seconds:.3f} / "
            f"{first.requests / per:.1f} ({first.heads / per:.1f}) / {first.bytes / per / 1e3:.0f} "
            f"| {run.samples_per_s:.1f} ({every}) | {run.requests_per_sample:.2f} "
            f"| {run.bytes_per_sample / 1e3:.0f} KB ({run.overread:+.1%}) |"
        )
    lines += ["", "Targets:", ""]
    for text, ok in checks.items():
        lines.append(f"* {'PASS' if ok['pass'] else 'FAIL'}: {text} ({ok['value']})")
    lines += ["", "Notes:", ""] + [f"* {note}" for note in setup["notes"]]
    return "\n".join(lines) + "\n"


def plot(runs: list[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    readers = list(dict.fromkeys(r.reader for r in runs))
    worker_counts = sorted({r.workers for r in runs})
    by_key = {(r.reader, r.workers): r for r in runs}
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    width = 0.8 / len(worker_counts)
    metrics = [
        ("samples/s (random reads)", lambda r: r.samples_per_s),
        ("requests per sample", lambda r: r.requests_per_sample),
        ("bytes moved / sample size", lambda r: 1 + r.overread),
    ]
    for ax, (title, value) in zip(axes, metrics, strict=True):
        for k, workers in enumerate(worker_counts):
            xs = [i + k * width for i in range(len(readers))]
            ys = [value(by_key[(name, workers)]) for name in readers]
            ax.bar(xs, ys, width, label=f"{workers} worker{'s' if workers > 1 else ''}")
        ax.set_xticks([i + width * (len(worker_counts) - 1) / 2 for i in range(len(readers))])
        ax.set_xticklabels(readers, fontsize=8)
        ax.set_title(title)
    axes[0].legend()
    fig.suptitle("Remote sample reads, local server with per-request delay")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(
    out: Path, stem: str, runs: list[Run], setup: dict[str, Any], checks: dict[str, Any]
) -> str:
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(runs, setup, checks)
    (out / f"{stem}.json").write_text(json.dumps(as_json(runs, setup, checks), indent=2) + "\n")
    (out / f"{stem}.md").write_text(text)
    plot(runs, out / f"{stem}.png")
    return text
