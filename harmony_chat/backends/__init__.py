"""Model backends: anything that turns prompt token ids into generated token ids. No UI imports."""
