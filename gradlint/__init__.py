"""gradlint: a static analyzer and codemod for PyTorch's gradient-mode guards."""

__version__ = "0.1.0"

from gradlint.api import check_source, fix_source  # noqa: E402  (after __version__, which cli imports)

__all__ = ["__version__", "check_source", "fix_source"]
