"""Training labs for the models harmony-chat ships; run from the repository root, never part of the package."""
