"""Pure byte layouts and names of the TACO format (header, ZIP, TACOCAT, VSI paths): no I/O."""
