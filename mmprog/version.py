"""The version of mmprog (one place; the saved models, checkpoints and reports record it)."""
__version__ = "0.1.0"
