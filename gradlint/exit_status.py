"""Exit statuses the command line shares (README "Exit codes": 0 clean, 1 findings,
2 usage, configuration or internal error, 130 on Ctrl-C)."""
USAGE_ERROR = 2
INTERRUPTED = 130
