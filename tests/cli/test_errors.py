"""Errors through the installed ``taco``: exit code 1 or 2, one line naming the file."""

from __future__ import annotations

import zipfile
from pathlib import Path

import click
from click.testing import CliRunner

from taco_gdal.cli import cli
from taco_gdal.cli._options import Common, verb
from taco_gdal.errors import TacoFormatError, TacoQueryError
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
