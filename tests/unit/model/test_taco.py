"""Taco: collection-field rules, extent, dataset-level extensions, COLLECTION key order."""

from __future__ import annotations

import gc
import json
import pickle
import weakref
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import shapely

from taco_gdal.errors import TacoNavigationError, TacoValidationError
from taco_gdal.extensions import ISTAC, STAC, LabelClass, Labels, Publication, Publications
from taco_gdal.model import TASKS, Curator, Extent, Provider, Sample, Taco, Tortilla
from taco_gdal.model.collection import collection_json_bytes
from tests.unit.model._trees import tree

MakeTaco = Callable[..., Taco]


@pytest.fixture
def flat(blob: Path) -> Tortilla:
    return Tortilla([Sample("a", blob), Sample("b", blob)])


# --- collection fields ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["Demo", "demo set", "démo", "", "a.b", 3])
def test_dataset_id_rule(flat: Tortilla, make_taco: MakeTaco, bad: object) -> None:
    with pytest.raises(TacoValidationError, match=r"^id: expected lowercase"):
        make_taco(flat, id=bad)


def test_dataset_id_accepts_lowercase_digits_dash_underscore(
    flat: Tortilla, make_taco: MakeTaco
) -> None:
    assert make_taco(flat, id="sen2-floods_2024").id == "sen2-floods_2024"


def test_title_at_most_250_characters(blob: Path, make_taco: MakeTaco) -> None:
    assert make_taco(Tortilla([Sample("a", blob)]), title="t" * 250)["title"] == "t" * 250
    with pytest.raises(TacoValidationError, match="at most 250 characters, found 251"):
        make_taco(Tortilla([Sample("a", blob)]), title="t" * 251)


@pytest.mark.parametrize(
    "good",
    [
        "CC-BY-4.0",
        "MIT",
        "Apache-2.0 OR MIT",
        "(MIT AND BSD-3-Clause) OR GPL-2.0+",
        "GPL-2.0-or-later WITH Classpath-exception-2.0",
        "LicenseRef-my-license",
        "proprietary",
        "other",
    ],
)
def test_spdx_licenses_accepted(blob: Path, make_taco: MakeTaco, good: str) -> None:
    assert make_taco(Tortilla([Sample("a", blob)]), licenses=[good])["licenses"] == [good]


@pytest.mark.parametrize(
    "bad", ["", "MIT OR", "(MIT", "MIT AND AND BSD", "Creative Commons", "-MIT", "MIT)"]
)
def test_non_spdx_licenses_rejected(flat: Tortilla, make_taco: MakeTaco, bad: str) -> None:
    with pytest.raises(TacoValidationError, match=r"licenses\[0\]: expected an SPDX"):
        make_taco(flat, licenses=[bad])


def test_licenses_must_be_a_non_empty_list(flat: Tortilla, make_taco: MakeTaco) -> None:
    with pytest.raises(TacoValidationError, match="at least one license"):
        make_taco(flat, licenses=[])
    with pytest.raises(TacoValidationError, match="expected a list of strings"):
        make_taco(flat, licenses="MIT")


def test_tasks_from_the_reference_list(blob: Path, make_taco: MakeTaco) -> None:
    assert "semantic-segmentation" in TASKS and len(TASKS) == 21
    taco = make_taco(Tortilla([Sample("a", blob)]), tasks=list(TASKS))
    assert taco["tasks"] == list(TASKS)
    with pytest.raises(TacoValidationError, match=r"tasks\[1\]: must be one of regression"):
        make_taco(Tortilla([Sample("b", blob)]), tasks=["regression", "segmentaton"])


def test_providers_as_models_and_dicts(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(
        Tortilla([Sample("a", blob)]),
        providers=[
            Provider("ESA", roles=["producer"], url="https://esa.int"),
            {"name": "Lab", "organization": "Uni", "email": "a@b.c"},
        ],
        curators=[Curator(name="Ana", email="ana@x.org"), {"organization": "Uni"}],
    )
    assert taco["providers"] == [
        {"name": "ESA", "roles": ["producer"], "url": "https://esa.int", "links": None},
        {
            "name": "Lab",
            "roles": None,
            "url": None,
            "links": None,
            "organization": "Uni",
            "email": "a@b.c",
        },
    ]
    assert taco["curators"][1] == {
        "name": None,
        "organization": "Uni",
        "email": None,
        "role": None,
    }


@pytest.mark.parametrize(
    ("providers", "match"),
    [
        ([{"roles": ["x"]}], r"providers\[0\]"),
        ([{"name": "x", "url": "ftp://a"}], "http:// or https://"),
        ([{"name": "x", "colour": "red"}], r"unknown keys \['colour'\]"),
        ("ESA", "expected a list"),
        ([42], r"providers\[0\]: expected a Provider or a dict"),
    ],
)
def test_invalid_providers(flat: Tortilla, make_taco: MakeTaco, providers: Any, match: str) -> None:
    with pytest.raises(TacoValidationError, match=match):
        make_taco(flat, providers=providers)


def test_invalid_curators(flat: Tortilla, make_taco: MakeTaco) -> None:
    with pytest.raises(TacoValidationError, match="a name or an organization"):
        make_taco(flat, curators=[{"email": "a@b.c"}])
    with pytest.raises(TacoValidationError, match="with '@'"):
        Curator(name="x", email="nope")


def test_required_text_fields(flat: Tortilla, make_taco: MakeTaco) -> None:
    with pytest.raises(TacoValidationError, match="description: expected a non-empty string"):
        make_taco(flat, description="")
    with pytest.raises(TacoValidationError, match="tortilla must be a Tortilla"):
        make_taco([Sample("a", b"1")])


def test_extra_keys_and_reserved_keys(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(Tortilla([Sample("a", blob)]), **{"split:strategy": "random"})
    assert taco.extra == {"split:strategy": "random"}
    for reserved in ("taco:pit_schema", "taco:field_schema"):
        with pytest.raises(TacoValidationError, match="reserved"):
            make_taco(Tortilla([Sample("a", blob)]), **{reserved: 1})
    for reserved in ("extent", "tortilla", "id"):
        with pytest.raises(TacoValidationError, match="reserved"):
            taco.extend_with({reserved: 1})
    with pytest.raises(TacoValidationError, match="not valid"):
        make_taco(Tortilla([Sample("a", blob)]), **{"bad-key": 1})
    with pytest.raises(TacoValidationError, match="expected a JSON value"):
        make_taco(Tortilla([Sample("a", blob)]), blob=object())


def test_missing_collection_key(flat: Tortilla, make_taco: MakeTaco) -> None:
    with pytest.raises(TacoNavigationError, match="no collection key"):
        make_taco(flat)["nope"]


# --- extent -------------------------------------------------------------------------------


def _stac(lon: float, lat: float, start: datetime, end: datetime | None = None) -> STAC:
    return STAC("EPSG:4326", (1, 2, 2), (lon - 0.5, 0.5, 0, lat + 0.5, 0, -0.5), start, None, end)


def test_no_footprint_no_spatial_extent(flat: Tortilla, make_taco: MakeTaco) -> None:
    assert make_taco(flat).metadata().collection["extent"] == {"temporal": None}


def test_extent_from_stac_centroids_and_time_middle(blob: Path, make_taco: MakeTaco) -> None:
    samples = [
        Sample("a", blob).extend_with(_stac(10, 40, datetime(2023, 1, 1), datetime(2023, 1, 3))),
        Sample("b", blob).extend_with(
            _stac(12, 45, datetime(2023, 6, 1), datetime(2023, 6, 1, 0, 0, 2))
        ),
    ]
    extent = make_taco(Tortilla(samples)).extent
    assert extent.spatial == (9.5, 39.5, 12.5, 45.5)  # the rasters, not their centroids
    assert extent.temporal == ("2023-01-02T00:00:00Z", "2023-06-01T00:00:01Z")


def test_extent_searches_deeper_levels(blob: Path, make_taco: MakeTaco) -> None:
    tiles = []
    for i in range(2):
        child = Sample("img", blob).extend_with(_stac(-70 + i, -10 - i, datetime(2020, 1, 1 + i)))
        tiles.append(Sample(f"t{i}", Tortilla([child])))
    extent = make_taco(Tortilla(tiles)).extent
    assert extent.spatial == (-70.5, -11.5, -68.5, -9.5)
    assert extent.temporal == ("2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z")


def test_extent_from_istac(blob: Path, make_taco: MakeTaco) -> None:
    geom = shapely.to_wkb(shapely.box(0, 0, 2, 2))
    sample = Sample("a", blob).extend_with(ISTAC("EPSG:4326", geom, datetime(2021, 5, 5)))
    extent = make_taco(Tortilla([sample])).extent
    assert extent.spatial == (0.0, 0.0, 2.0, 2.0)  # the geometry, not its centroid
    assert extent.temporal == ("2021-05-05T00:00:00Z", "2021-05-05T00:00:00Z")


def test_extent_crosses_the_antimeridian(blob: Path, make_taco: MakeTaco) -> None:
    lons = [170, 179, -179]
    samples = [
        Sample(f"s{i}", blob).extend_with(_stac(lon, 0, datetime(2020, 1, 1)))
        for i, lon in enumerate(lons)
    ]
    assert make_taco(Tortilla(samples)).extent.spatial == (169.5, -0.5, -178.5, 0.5)


def test_extent_given_by_user(flat: Tortilla, make_taco: MakeTaco) -> None:
    given = {"spatial": [0, 0, 1, 1], "temporal": ["2020-01-01T00:00:00Z", "2020-02-01T00:00:00Z"]}
    assert make_taco(flat, extent=given).metadata().collection["extent"] == {
        "spatial": [0.0, 0.0, 1.0, 1.0],
        "temporal": ["2020-01-01T00:00:00Z", "2020-02-01T00:00:00Z"],
    }
    assert make_taco(flat, extent=Extent((1, 2, 3, 4))).extent.temporal is None


@pytest.mark.parametrize(
    "bad",
    [
        {"spatial": [0, 0, 1]},
        {"spatial": [0, 10, 1, 5]},
        {"spatial": [0, 0, 200, 1]},
        {"spatial": [0, 0, 1, 1], "temporal": ["2020-02-01", "2020-01-01"]},
        {"spatial": [0, 0, 1, 1], "temporal": ["yesterday", "today"]},
        {"bbox": [0, 0, 1, 1]},
    ],
)
def test_invalid_extent(flat: Tortilla, make_taco: MakeTaco, bad: dict[str, Any]) -> None:
    with pytest.raises(TacoValidationError, match="extent"):
        make_taco(flat, extent=bad)


# --- extensions and key order -------------------------------------------------------------------


def test_extend_with_taco_extensions_dict_and_pydantic(blob: Path, make_taco: MakeTaco) -> None:
    import pydantic

    class Sensor(pydantic.BaseModel):
        sensor: str

    taco = make_taco(Tortilla([Sample("a", blob)]), **{"z_extra": 1})
    taco.extend_with(Labels([LabelClass("water", 0, "open water"), LabelClass("land", 1)]))
    taco.extend_with(Publications([Publication("10.1/x", "A (2024)")]))
    taco.extend_with({"custom:note": "hi"})
    taco.extend_with(Sensor(sensor="S2"))
    taco.extend_with(pa.table({"when": [datetime(2024, 1, 2)]}))
    collection = taco.metadata().collection
    assert list(collection) == [
        "id",
        "dataset_version",
        "description",
        "licenses",
        "providers",
        "tasks",
        "taco_version",
        "title",
        "curators",
        "keywords",
        "extent",
        "z_extra",
        "labels:classes",
        "labels:description",
        "labels:num_classes",
        "publications",
        "custom:note",
        "sensor",
        "when",
        "taco:pit_schema",
        "taco:field_schema",
    ]
    assert collection["labels:classes"] == [
        {"name": "water", "category": "0", "description": "open water"},
        {"name": "land", "category": "1", "description": None},
    ]
    assert collection["labels:num_classes"] == 2
    assert collection["publications"] == [
        {"doi": "10.1/x", "citation": "A (2024)", "summary": None}
    ]
    assert collection["when"] == "2024-01-02T00:00:00"
    json.loads(collection_json_bytes(collection))


def test_extend_with_conflicting_key(flat: Tortilla, make_taco: MakeTaco) -> None:
    taco = make_taco(flat).extend_with({"x": 1})
    with pytest.raises(TacoValidationError, match="'x' already exists"):
        taco.extend_with({"x": 2})
    with pytest.raises(TacoValidationError, match="reserved"):
        taco.extend_with({"licenses": ["MIT"]})
    with pytest.raises(TacoValidationError, match="expected a TacoExtension"):
        taco.extend_with(3)
    with pytest.raises(TacoValidationError, match="one-row table"):
        taco.extend_with(pa.table({"y": [1, 2]}))


def test_taco_version_default_and_override(flat: Tortilla, make_taco: MakeTaco) -> None:
    assert make_taco(flat)["taco_version"] == "2.0.0"


# --- level tables cache -----------------------------------------------------------------------


def test_level_tables_shared_while_a_package_holds_them(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(tree(blob, [("t0", ["a", "b"]), ("t1", ["a", "b"])]))
    first = taco.metadata()
    again = taco.metadata()
    assert all(a is b for a, b in zip(first.levels, again.levels, strict=True))
    assert first.levels is not again.levels  # each package owns its list


def test_level_tables_freed_with_the_last_package(blob: Path, make_taco: MakeTaco) -> None:
    # the Taco holds its tables weakly: a writer's package frees them when it is done
    taco = make_taco(tree(blob, [("t0", ["a", "b"]), ("t1", ["a", "b"])]))
    package = taco.metadata()
    expected = [table.to_pylist() for table in package.levels]
    held = weakref.ref(package.levels[1])
    del package
    gc.collect()
    assert held() is None
    assert [table.to_pylist() for table in taco.metadata().levels] == expected


def test_taco_pickles_after_metadata(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(tree(blob, [("t0", ["a", "b"]), ("t1", ["a", "b"])]))
    package = taco.metadata()
    copy = pickle.loads(pickle.dumps(taco))
    assert [t.to_pylist() for t in copy.metadata().levels] == [
        t.to_pylist() for t in package.levels
    ]
    assert copy.metadata().collection == package.collection


def test_collection_kept_without_the_tables(blob: Path, make_taco: MakeTaco) -> None:
    taco = make_taco(tree(blob, [("t0", ["a", "b"]), ("t1", ["a", "b"])]))
    first = taco.collection
    assert taco._collection is not None and taco._cached_tables() is None
    first["id"] = "changed"  # a copy: the Taco's own stays
    assert taco.collection["id"] != "changed"
    taco.extend_with({"extra_key": 1})
    assert taco.collection["extra_key"] == 1
    assert taco.collection == taco.metadata().collection
