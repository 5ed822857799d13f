"""Conversation history in SQLite: storage, search, export. No UI imports."""
