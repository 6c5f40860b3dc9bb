"""``python -m taco_gdal``: the ``taco`` command."""

from __future__ import annotations

from taco_gdal.cli import main

if __name__ == "__main__":
    main()
