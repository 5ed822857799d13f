"""The harmony format: vocabulary, session manager, stream decoder and visibility policy.

A pure format library: it imports no backend, conversation core, tool, history or UI
(the turn runner that joins it to a backend is :mod:`harmony_chat.generation`).
"""
