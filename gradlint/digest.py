"""The hash gradlint keys its caches and walks with. `hashlib`'s own blake2b is `_blake2`'s;
importing `hashlib` also loads OpenSSL's `_hashlib`, about a tenth of a small run's start-up."""
try:
    from _blake2 import blake2b
except ImportError:  # an interpreter without the built-in module
    from hashlib import blake2b

__all__ = ["blake2b"]
