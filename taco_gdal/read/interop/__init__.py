"""The dataset in other catalogues' terms: STAC and Croissant built from a TacoDataset."""
