"""The harmony engine: vocabulary, session manager and stream decoder. No UI imports here."""
