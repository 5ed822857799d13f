"""Benchmarks: what each layer between the model and the screen costs. No UI imports."""
