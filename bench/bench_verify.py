"""Benchmark: ``verify(level="crc")`` throughput vs ``cksum`` and ``zlib.crc32``; what verify names.

Part 1, throughput.  For each size (default 256 MiB, 1 GiB, 2 GiB) a TACO ZIP of
100 MiB samples of random bytes is written with ``taco_gdal.create``.  Then, for
``--repeat`` rounds, interleaved in an order that rotates from round to round, each
in a fresh subprocess over the same file: ``cksum FILE``; ``zlib.crc32`` of the whole file
in 8 MiB reads (Python's zlib; verify itself uses ISA-L's CRC-32 when ``isal`` is
installed, as the writer does); ``taco_gdal.verify(FILE, level="crc")``, imports
done before its clock starts.  The file is read once before the first round, so the page cache
holds it for all three alike (nothing is dropped; the machine's RAM is printed,
and whether the file fits).  Reported: median seconds and GB/s of each, the
ratio verify/zlib and verify/cksum (throughput; >= 0.8 is the target), and the
worst round's ratio beside the median.

Part 2, what verify names.  A 1,000-sample ZIP (small GeoTIFF-sized samples of
random bytes): verified clean locally and over the Range server on 127.0.0.1;
then one byte flipped in one sample (named exactly, with its row), and one byte
flipped in METADATA/level0.parquet (named).

Run: ``.venv/bin/python bench/bench_verify.py [--sizes 256,1024,2048] [--repeat 3]
[--output FILE]``; prints the figures and writes ``bench/results/verify.json``.  Data lives in a
temporary folder (``--workdir``) deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script
    from _common import write_json  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "verify.json"
MIB = 1024 * 1024

ZLIB = """
import sys, time, zlib
t = time.perf_counter(); crc = 0
with open(sys.argv[1], "rb", buffering=0) as f:
    while block := f.read(8 << 20):
        crc = zlib.crc32(block, crc)
print(time.perf_counter() - t)
"""
VERIFY = """
import sys, time
import taco_gdal
import taco_gdal.read.opening.containers.registry, taco_gdal.verify._verify  # not timed
t = time.perf_counter(); report = taco_gdal.verify(sys.argv[1], level="crc")
elapsed = time.perf_counter() - t
assert report.ok, str(report)
print(elapsed)
"""


def _make_container(folder: Path, total_mib: int, sample_mib: int = 100) -> Path:
    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import create

    folder.mkdir(parents=True, exist_ok=True)
    samples = []
    remaining = total_mib
    i = 0
    while remaining > 0:
        size = min(sample_mib, remaining)
        path = folder / f"s{i:04d}.bin"
        with path.open("wb") as f:
            for _ in range(size):
                f.write(os.urandom(MIB))
        samples.append(Sample(f"s{i:04d}", path))
        remaining -= size
        i += 1
    taco = Taco(Tortilla(samples), id="bench-verify", dataset_version="1", description="bench",
                licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"])  # fmt: skip
    out = create(taco, folder.parent / f"c{total_mib}.tacozip", quiet=True)[0]
    shutil.rmtree(folder)
    return out


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO)
    wall = time.perf_counter() - start
    if cmd[0] == "cksum":
        return wall
    return float(done.stdout.strip().splitlines()[-1])


def throughput(workdir: Path, sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    rows = []
    for mib in sizes:
        path = _make_container(workdir / f"src{mib}", mib)
        size = path.stat().st_size
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm for all
        times: dict[str, list[float]] = {"cksum": [], "zlib": [], "verify": []}
        commands = {
            "cksum": ["cksum", str(path)],
            "zlib": [sys.executable, "-c", ZLIB, str(path)],
            "verify": [sys.executable, "-c", VERIFY, str(path)],
        }
        tools = list(commands)
        for round_ in range(repeat):  # the order rotates, so no tool is always first or last
            for tool in tools[round_ % 3 :] + tools[: round_ % 3]:
                times[tool].append(_timed(commands[tool]))
        med = {k: statistics.median(v) for k, v in times.items()}
        worst_zlib = max(v / z for v, z in zip(times["verify"], times["zlib"], strict=True))
        worst_cksum = max(v / c for v, c in zip(times["verify"], times["cksum"], strict=True))
        row = {
            "size_bytes": size,
            "fits_in_ram": size < _ram_bytes() // 2,
            "seconds_median": med,
            "gb_per_s": {k: size / v / 1e9 for k, v in med.items()},
            "throughput_ratio_vs_zlib": med["zlib"] / med["verify"],
            "throughput_ratio_vs_cksum": med["cksum"] / med["verify"],
            "worst_round_ratio_vs_zlib": 1 / worst_zlib,
            "worst_round_ratio_vs_cksum": 1 / worst_cksum,
            "rounds": times,
        }
        rows.append(row)
        print(
            f"{size / 1e9:5.2f} GB: cksum {row['gb_per_s']['cksum']:.2f} GB/s, zlib.crc32 "
            f"{row['gb_per_s']['zlib']:.2f} GB/s, verify(crc) {row['gb_per_s']['verify']:.2f} GB/s"
            f" -> {row['throughput_ratio_vs_zlib']:.2f}x zlib (worst round "
            f"{row['worst_round_ratio_vs_zlib']:.2f}x), {row['throughput_ratio_vs_cksum']:.2f}x "
            f"cksum (worst {row['worst_round_ratio_vs_cksum']:.2f}x); load average "
            f"{os.getloadavg()[0]:.1f}",
            flush=True,
        )
        path.unlink()
    return rows


def _ram_bytes() -> int:
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def naming(workdir: Path) -> dict[str, Any]:
    import taco_gdal
    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import create
    from tests.support.servers.range_server import RangeServer

    src = workdir / "small"
    src.mkdir()
    samples = []
    for i in range(1000):
        path = src / f"t{i:04d}.bin"
        path.write_bytes(os.urandom(600 + i % 50))
        samples.append(Sample(f"t{i:04d}", path))
    taco = Taco(Tortilla(samples), id="bench-names", dataset_version="1", description="bench",
                licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"])  # fmt: skip
    (workdir / "www").mkdir()
    good = create(taco, workdir / "www" / "good.tacozip", quiet=True)[0]
    out: dict[str, Any] = {"local_clean": taco_gdal.verify(good, level="crc").ok}
    with RangeServer(root=workdir / "www") as server:
        remote = taco_gdal.verify(f"{server.url}/good.tacozip", level="crc")
        out["remote_clean"] = remote.ok
        out["remote_requests"] = len(server.log.records())
    bad = workdir / "bad.tacozip"
    shutil.copy(good, bad)
    with zipfile.ZipFile(bad) as z:
        info = z.getinfo("DATA/t0737")
        meta = z.getinfo("METADATA/level0.parquet")
    data = bytearray(bad.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + 100] ^= 0x01
    bad.write_bytes(bytes(data))
    report = taco_gdal.verify(bad, level="crc")
    out["sample_flip"] = [f.to_dict() for f in report.failures]
    data[meta.header_offset + 30 + len(meta.filename) + 50] ^= 0x01
    bad.write_bytes(bytes(data))
    report = taco_gdal.verify(bad, level="crc")
    out["sample_and_metadata_flip"] = [(f.code, f.member, f.row_id) for f in report.failures]
    print(f"1,000-sample ZIP: clean locally {out['local_clean']}, over the Range server "
          f"{out['remote_clean']} ({out['remote_requests']} requests)")  # fmt: skip
    print(
        "one flipped sample byte ->",
        [(f["code"], f["member"], f["row_id"]) for f in out["sample_flip"]],
    )
    print("plus a flipped metadata byte ->", out["sample_and_metadata_flip"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256,1024,2048", help="container sizes in MiB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="taco-bench-verify-", dir=args.workdir))
    try:
        print(f"machine: {os.cpu_count()} cores, {_ram_bytes() / 1e9:.1f} GB RAM, load average "
              f"{os.getloadavg()[0]:.1f}; files are read once before timing (page cache warm for "
              "every tool)")  # fmt: skip
        results = {
            "machine": {
                "cpus": os.cpu_count(),
                "ram_bytes": _ram_bytes(),
                "python": platform.python_version(),
            },
            "naming": naming(workdir),
            "throughput": throughput(workdir, sizes, args.repeat),
        }
        write_json(args.output, results)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
