"""Writers: streaming ZIP, FOLDER, TACOCAT, TACOLLECTION, export and conversions."""
