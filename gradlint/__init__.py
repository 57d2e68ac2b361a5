"""gradlint: a static analyzer and codemod for PyTorch's gradient-mode guards."""

__version__ = "0.1.0"
