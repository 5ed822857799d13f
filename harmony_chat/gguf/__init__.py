"""GGUF helpers: the o200k tokenizer as GGUF stores it, and a gpt-oss GGUF writer. No UI imports."""
