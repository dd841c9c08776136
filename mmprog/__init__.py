"""mmprog: max-margin structured prediction as explicit mathematical programs."""
__version__ = "0.1.0"
