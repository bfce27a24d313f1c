"""Models measured: the judge calibrated on labelled pairs, every model rated on the user's own library."""
