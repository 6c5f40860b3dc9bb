"""The static SVG footprint map: window, graticule, shapes, caps."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import shapely

from taco_gdal.read.notebook._svg import footprint_svg, map_view

_NS = "{http://www.w3.org/2000/svg}"


def test_svg_is_well_formed_with_frame_graticule_and_shapes() -> None:
    shapes = [shapely.box(-4, 40, -3, 41), shapely.Point(2, 41), None]
    root = ET.fromstring(footprint_svg(shapes, width=300, height=200))
    assert root.tag == f"{_NS}svg"
    assert root.findall(f".//{_NS}path") and root.findall(f".//{_NS}circle")
    labels = [t.text for t in root.iter(f"{_NS}text")]
    assert "2 footprints" in labels
    assert any(label and label.endswith("°") for label in labels)
    assert "script" not in footprint_svg(shapes)


def test_window_fits_the_shapes_and_stays_in_the_world() -> None:
    view = map_view((-4.0, 40.0, -3.0, 41.0), 300, 200)
    assert view.west <= -4 and view.east >= -3 and view.south <= 40 and view.north >= 41
    assert view.east - view.west < 5
    world = map_view((-180.0, -90.0, 180.0, 90.0), 300, 200)
    assert (world.west, world.south, world.east, world.north) == (-180, -90, 180, 90)
    assert map_view(None, 300, 200).east == 180


def test_many_shapes_are_capped_and_the_caption_says_so() -> None:
    points = [shapely.Point(i * 0.001, 0) for i in range(50)]
    svg = footprint_svg(points, max_shapes=10)
    assert svg.count("<circle") == 10
    assert "50 footprints (10 drawn)" in svg


def test_graticule_labels_stay_inside_the_map() -> None:
    # a window whose top graticule line sits at the map's edge (its label was cut off)
    width, height = 320, 200
    tile = shapely.box(124.008, 51.23, 124.008 + 0.0832, 51.23 + 0.05)
    root = ET.fromstring(footprint_svg([tile], width=width, height=height))
    grid = [t for t in root.iter(f"{_NS}text") if (t.text or "").endswith("°")]
    assert grid
    for text in grid:
        assert float(text.get("y", 0)) >= 8, text.text  # the glyphs (8 px high) are not cut
        if text.get("text-anchor") != "end":
            assert float(text.get("x", 0)) <= width - 40, text.text


def test_tiles_smaller_than_a_pixel_are_drawn_at_a_visible_size() -> None:
    # 640 m tiles spread over 4 degrees: each is a fraction of a pixel at this zoom
    size = 640 / 111_320
    tiles = [shapely.box(x, 40.0, x + size, 40.0 + size) for x in (-4.0, -2.0, 0.0)]
    root = ET.fromstring(footprint_svg(tiles, width=320, height=200))
    squares = root.findall(f".//{_NS}rect")[1:]  # the first rect is the map's frame
    assert len(squares) == 3
    assert all(float(s.get("width", 0)) >= 3 and float(s.get("height", 0)) >= 3 for s in squares)
    assert not root.findall(f".//{_NS}g/{_NS}path")
