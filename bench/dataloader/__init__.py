"""DataLoader benchmark: taco_gdal's SampleDataset vs the same loop on tacoreader's paths."""
