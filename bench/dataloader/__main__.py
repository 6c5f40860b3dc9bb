"""``python -m bench.dataloader``: DataLoader epochs over a slow local server.

Builds TACO ZIPs of GeoTIFF samples (one per sample size), serves them from one
local Range server on 127.0.0.1 (plain HTTP, plus a TLS listener for
tacoreader) with a fixed delay per request, and times DataLoader epochs with
0, 2, 4 and 8 fork workers: taco_gdal's ``SampleDataset`` vs the same loop on
tacoreader 2.4.21's paths with rasterio's defaults.  Writes ``dataloader.json``,
``dataloader.md`` and ``dataloader.png``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import torch
from osgeo import gdal

from bench.dataloader import data, report
from bench.dataloader.loops import DEFAULT_LOOPS, LOOPS, Urls
from bench.dataloader.runner import Epoch, measure
from bench.dataloader.server import ServerProcess
from tests.support.servers.tls import make_tls

RESULTS = Path(__file__).resolve().parents[1] / "results"
NOTES = [
    "tacoreader refuses plain http:// (obstore), so it loads metadata over HTTPS from a TLS "
    "listener of the same server (throw-away CA via SSL_CERT_FILE); its /vsisubfile/ paths are "
    "pointed at the plain-HTTP listener, so both loops read samples over HTTP.",
    "Both loops resolve their GDAL paths once in the parent; what differs is how a sample is "
    "read: SampleDataset (read profile, the sample's bytes in one ranged GET) vs rasterio.open "
    "with GDAL's default options (a 16 KB header read, then growing read-ahead requests).",
    "Requests per sample of the timed epoch only: the warm-up half also pays GDAL's size check "
    "of the container, one HEAD per worker process (column warmup_requests in the JSON).",
    "The Range server runs in its own process (bench/dataloader/server.py), so that its threads "
    "do not share a GIL with the DataLoader's main process.",
    "taco_gdal's loop is SampleDataset with its defaults: a batch's samples are read by up to 4 "
    "threads of the worker (fewer above 2 MB per sample), so a worker has up to 4 requests in "
    "flight and can pass the ceiling, which assumes one; the reference loop has one.",
    "Opt-in loops (--loops): 'taco_gdal read_threads=1' reads a batch's samples one after the "
    "other (the default before read threads were); 'taco_gdal rasterio reader' is SampleDataset "
    "with the reader it used before it read pixels with GDAL alone (open_sample + rasterio "
    "read()), to show that change within one run.",
    "The machine is shared: with a high load average every loop becomes CPU-bound (decode, "
    "collate, 8 workers on 2 CPUs) and both the ratio to the ceiling and the ratio to the "
    "reference shrink; the worst round is reported beside the best.",
]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=192, help="samples per dataset (2 halves)")
    parser.add_argument("--pixels", default="128,256", help="comma-separated sample sides (px)")
    parser.add_argument("--workers", default="0,2,4,8", help="comma-separated worker counts")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--delay-ms", type=float, default=25.0, help="server delay per request")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument(
        "--loops", default=",".join(DEFAULT_LOOPS), help=f"comma-separated, of: {', '.join(LOOPS)}"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--stem", default="dataloader")
    return parser.parse_args(argv)


def _measure(args: argparse.Namespace, work: Path) -> tuple[list[Epoch], list[int]]:
    pixels = [int(p) for p in args.pixels.split(",")]
    built = {p: data.build(work, args.samples, p) for p in pixels}
    tls = make_tls(work / "tls")
    os.environ["SSL_CERT_FILE"] = str(tls.ca)  # for tacoreader (obstore)
    epochs: list[Epoch] = []
    with ServerProcess(work / "www", args.delay_ms / 1000, tls) as server:
        https = server.https_url
        for round_ in range(1, args.repeat + 1):
            for p, dataset in built.items():
                name = dataset.path.name
                urls = Urls(f"{server.url}/{name}", f"{https}/{name}", server.url, https)
                for workers in (int(w) for w in args.workers.split(",")):
                    for loop in args.loops.split(","):
                        print(f"round {round_}: {p} px, {workers} workers, {loop}", flush=True)
                        samples = LOOPS[loop](urls)
                        epoch = measure(
                            loop, samples, server, workers, args.batch_size, p, dataset.mean_bytes
                        )
                        print(
                            f"  {epoch.samples_per_s:.1f} samples/s, "
                            f"{epoch.requests_per_sample:.2f} requests/sample",
                            flush=True,
                        )
                        epochs.append(epoch)
    return epochs, pixels


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="taco_bench_loader_") as tmp:
        epochs, pixels = _measure(args, Path(tmp))
    setup = {
        "command": " ".join([".venv/bin/python -m bench.dataloader", *(argv or sys.argv[1:])]),
        "samples": args.samples,
        "pixels": pixels,
        "batch_size": args.batch_size,
        "delay_ms": args.delay_ms,
        "repeat": args.repeat,
        "gdal": gdal.__version__,
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "notes": NOTES,
    }
    print(report.write(args.out, args.stem, epochs, setup, args.delay_ms / 1000))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
