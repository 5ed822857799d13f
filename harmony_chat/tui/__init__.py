"""The Textual chat app. Everything that imports Textual lives under this package."""
