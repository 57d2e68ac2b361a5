"""gradlint: a static analyzer and codemod for PyTorch's gradient-mode guards."""

__version__ = "0.1.0"

__all__ = ["__version__", "check_source", "fix_source"]


def __getattr__(name: str):
    """The API loads on first use: a run of the command line does not pay for it."""
    if name in ("check_source", "fix_source"):
        from gradlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'gradlint' has no attribute {name!r}")
