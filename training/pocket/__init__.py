"""The pocket gpt-oss's training lab: data generators, held-out prompts, the recipe, export and evaluation.

Run from the repository root with the ``train`` extra: ``python -m training.pocket.train`` writes the
GGUF and its manifest into ``harmony_chat/demo/`` (where the app loads it), and
``python -m training.pocket.evaluate --record`` adds the measured rates. ``README.md`` beside this
file has the recipe and the build record. The app itself needs none of this.
"""
