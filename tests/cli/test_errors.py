"""Errors through the installed ``taco``: exit code 1 or 2, one line naming the file."""

from __future__ import annotations

import functools
import os
import threading
import zipfile
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from taco_gdal.cli import cli
from taco_gdal.cli._options import Common, verb
from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from tests.cli.conftest import Run, taco


def _one_line(run: Run, code: int, *needles: str) -> str:
    assert run.code == code, run.err
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert "Traceback" not in run.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.tacozip"
    _one_line(taco("info", missing, check=False), 1, "taco info: TacoIOError", str(missing))


def test_bad_sql_is_a_usage_error(datasets: dict[str, Path]) -> None:
    path = str(datasets["flat"])
    line = _one_line(taco("sql", path, "SELEC id FROM data", check=False), 2, "TacoQueryError")
    assert path in line and "SELEC" in line


def test_plain_zip(tmp_path: Path) -> None:
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("readme.txt", "not a TACO dataset")
    _one_line(taco("ls", plain, check=False), 1, "TacoFormatError", str(plain), "TACO_HEADER")


def test_truncated_container(datasets: dict[str, Path], tmp_path: Path) -> None:
    data = datasets["2level"].read_bytes()
    cut = tmp_path / "cut.tacozip"
    cut.write_bytes(data[: len(data) // 2])
    line = _one_line(taco("index", cut, tmp_path / "i.gpkg", check=False), 1, str(cut))
    assert "TacoFormatError" in line and "truncated" in line
    assert not (tmp_path / "i.gpkg").exists()


def test_usage_errors_and_debug(datasets: dict[str, Path]) -> None:
    path = str(datasets["flat"])
    _one_line(taco("ls", path, "--bbox", "1,2", check=False), 2, "usage error", "--bbox")
    _one_line(taco("frobnicate", check=False), 2, "No such command")
    _one_line(taco("ls", path, "--level", "3", check=False), 2, "--level must be 0..0", path)
    debug = taco("open", path, "s999", "--debug", check=False)
    assert debug.code == 1 and "Traceback" in debug.err and "TacoNavigationError" in debug.err


def test_handler_maps_classes_to_codes_in_process() -> None:
    """The same handler, in-process, for errors hard to cause from outside."""

    @verb("boom", examples=["taco boom"], paths=("path",))
    @click.argument("path")
    @click.option("--kind")
    def boom(common: Common, path: str, kind: str) -> None:
        """Raise the error asked for."""
        errors = {
            "format": TacoFormatError("expected a TACO_HEADER, found zeros"),
            "query": TacoQueryError("unknown column 'x'\nLINE 1: SELECT x"),
            "bug": ZeroDivisionError("division by zero"),
            "os": FileNotFoundError(2, "No such file or directory", path),
        }
        raise errors[kind]

    cli.add_command(boom)
    try:
        runner = CliRunner()
        cases = {"format": 1, "query": 2, "bug": 1, "os": 1}
        for kind, code in cases.items():
            result = runner.invoke(cli, ["boom", "x.tacozip", "--kind", kind])
            assert result.exit_code == code, (kind, result.output)
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and "x.tacozip" in lines[0], result.output
        assert "a bug" in runner.invoke(cli, ["boom", "x.tacozip", "--kind", "bug"]).output
    finally:
        cli.commands.pop("boom")


def test_config_is_thread_local_and_scoped() -> None:
    from osgeo import gdal

    seen: list[str | None] = []

    @verb("peek", examples=["taco peek"], paths=())
    def peek(common: Common) -> None:
        """Record a GDAL option as the verb sees it."""
        seen.append(gdal.GetConfigOption("TACO_TEST_OPTION"))

    cli.add_command(peek)
    try:
        result = CliRunner().invoke(cli, ["peek", "--config", "TACO_TEST_OPTION=42"])
        assert result.exit_code == 0, result.output
        bad = CliRunner().invoke(cli, ["peek", "--config", "NOEQUALS"])
        assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    finally:
        cli.commands.pop("peek")
    assert seen == ["42"]
    assert gdal.GetConfigOption("TACO_TEST_OPTION") is None  # gone after the command


def test_help_does_not_import_the_heavy_stack() -> None:
    """``taco <verb> --help`` imports no pyarrow/DuckDB/pandas (checked in a fresh child)."""
    import subprocess
    import sys

    code = (
        "import sys; from click.testing import CliRunner; from taco_gdal.cli import VERBS, cli\n"
        "for v in VERBS: assert CliRunner().invoke(cli, [v, '--help']).exit_code == 0, v\n"
        "print([m for m in ('duckdb', 'pyarrow', 'geopandas', 'pandas') if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_documented_schema_file_is_current() -> None:
    """docs/cli-json-schema.json is ``python -m taco_gdal.cli.schema`` (regenerate it if not)."""
    import json

    from jsonschema import Draft202012Validator

    from taco_gdal.cli.schema import SCHEMAS, VERB_SCHEMA, schema_document

    path = Path(__file__).parents[2] / "docs" / "cli-json-schema.json"
    assert json.loads(path.read_text("utf-8")) == json.loads(schema_document())
    for schema in SCHEMAS.values():
        Draft202012Validator.check_schema(schema)
    from taco_gdal.cli import VERBS

    assert set(VERB_SCHEMA) == set(VERBS)


class _NoRangeHandler(SimpleHTTPRequestHandler):
    """The standard library's file server: it answers every GET with the whole file."""

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def no_range_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A 127.0.0.1 HTTP server that ignores ``Range`` (200 and the whole file), and its root."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_NoRangeHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_server_without_range_is_one_line_with_a_hint(
    no_range_server: tuple[str, Path],
) -> None:
    url, root = no_range_server
    blobs = []
    for name in ("a", "b"):  # big enough that GDAL will not fetch the whole file at once
        path = root / f"{name}.bin"
        path.write_bytes(os.urandom(3_000_000))
        blobs.append(Sample(name, path))
    taco_ = Taco(
        Tortilla(blobs),
        id="big",
        dataset_version="1.0.0",
        description="two 3 MB samples",
        licenses=["CC0-1.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["other"],
    )
    create(taco_, root / "big.tacozip", quiet=True)
    for verb_ in ("info", "ls"):
        line = _one_line(
            taco(verb_, f"{url}/big.tacozip", check=False),
            1,
            "TacoIOError",
            "Range downloading not supported",
            "serve it from a server that supports Range",
        )
        assert "ERROR 1" not in line


def test_an_existing_output_names_the_cli_option(datasets: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "copy.tacozip"
    out.write_bytes(b"x")
    line = _one_line(
        taco("export", datasets["flat"], out, check=False), 2, "TacoExistsError", "--overwrite"
    )
    assert "overwrite=True" not in line


def test_a_bbox_across_the_antimeridian_is_noted_and_documented(
    datasets: dict[str, Path],
) -> None:
    run = taco("ls", datasets["flat"], "--bbox", "1,40,-1,41", "--format", "csv")
    assert "crosses the antimeridian" in run.err and "swap them" in run.err
    # from 1 east across 180 to -1: every longitude but -1..1, so the samples near -3.6 match
    assert len(run.out.strip().splitlines()[1:]) == 3
    assert "antimeridian" in taco("ls", "--help").out
    quiet = taco("ls", datasets["flat"], "--bbox", "-4,40,-3,41", "--format", "csv")
    assert quiet.err == ""


def test_index_help_queries_the_layer_it_names() -> None:
    text = taco("index", "--help").out
    assert "--layer footprints" in text and "FROM footprints" in text
    assert "FROM dataset" not in text
