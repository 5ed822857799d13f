"""Helpers the remote-engine tests share: a real llama-server, fake engines, a non-gpt-oss GGUF."""
