"""What an analyst sees in Jupyter: HTML and text reprs, the SVG footprint map, plots."""
