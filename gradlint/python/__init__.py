"""The Python front end: libcst parsing, import resolution, guard recognition."""
