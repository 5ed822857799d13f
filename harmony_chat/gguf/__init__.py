"""GGUF helpers: header checks, the o200k tokenizer as GGUF stores it, a gpt-oss GGUF writer. No UI imports.

``discovery`` finds the gpt-oss GGUF files already on this machine (a header read each, no load).
"""
