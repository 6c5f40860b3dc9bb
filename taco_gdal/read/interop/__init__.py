"""Bridges between TACO datasets and the catalogues of the EO and ML ecosystems."""
