"""Tools the model can call (filled in below)."""
