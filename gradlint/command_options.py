"""The options of `gradlint check` and `gradlint fix`, as data: `gradlint.cli` makes click's
options of them (the help, the usage errors), and `gradlint.quick_command_line` reads the
usual command lines with them without importing click (a third of a small run's start-up)."""
from __future__ import annotations


class Option:
    """One option. `kind`: "flag" (True when given), "pair" (`--x/--no-x`, True or False,
    default None), "value" (a string; the last one given counts), "multiple" (every value,
    in order). `path`: checked as `click.Path(file_okay=..., dir_okay=..., exists=...)`
    checks it; `choices`: `click.Choice`; `at_least`: `click.IntRange(min=...)`."""

    __slots__ = ("declarations", "destination", "kind", "default", "help", "metavar", "show_default",
                 "path", "choices", "at_least")

    def __init__(self, declarations, destination, kind, help, default=None, metavar=None, show_default=False,
                 path=None, choices=None, at_least=None):
        self.declarations = declarations  # e.g. ("--output-file", "-o"); a pair: ("--x/--no-x",)
        self.destination = destination
        self.kind = kind
        self.default = () if kind == "multiple" else False if kind == "flag" else default
        self.help = help
        self.metavar = metavar
        self.show_default = show_default
        self.path = path  # (file_okay, dir_okay, exists) or None
        self.choices = choices
        self.at_least = at_least

    def names(self):
        """The spellings on the command line, each with the value it sets (None: takes a value)."""
        if self.kind == "pair":
            yes, no = self.declarations[0].split("/")
            return {yes: True, no: False}
        return {name: True if self.kind == "flag" else None for name in self.declarations}


def _codes(name: str, destination: str, help: str) -> Option:
    return Option((name,), destination, "multiple", help, metavar="CODES")


SHARED_OPTIONS = (
    _codes("--select", "select", "Rule codes or prefixes to enable (comma-separated; ALL for every rule)."),
    _codes("--extend-select", "extend_select", "Codes or prefixes to enable on top of the selection."),
    _codes("--ignore", "ignore", "Codes or prefixes to disable."),
    Option(("--config",), "config_path", "value",
           "One configuration file for every file (default: each file's nearest "
           ".gradlint.toml, gradlint.toml or pyproject.toml with [tool.gradlint]).", path=(True, False, False)),
    Option(("--isolated",), "isolated", "flag", "Read no configuration file."),
    Option(("--exclude",), "exclude", "multiple",
           "Glob patterns to skip, replacing the configured and default ones (comma-separated).", metavar="PATTERNS"),
    Option(("--extend-exclude",), "extend_exclude", "multiple",
           "Glob patterns to skip on top of the others (comma-separated).", metavar="PATTERNS"),
    Option(("--respect-gitignore/--no-respect-gitignore",), "respect_gitignore", "pair",
           "Skip what .gitignore files exclude (default: yes)."),
    Option(("--show-settings",), "show_settings", "flag",
           "Print the settings of the first path (or .) and the file they came from, then exit."),
    Option(("--show-files",), "show_files", "flag", "Print the files that would be checked, then exit."),
    Option(("--output-format",), "output_format", "value", None, default="text", show_default=True,
           metavar="FORMAT"),  # the help names the formats (`gradlint.cli`)
    Option(("--exit-zero",), "exit_zero", "flag", "Exit 0 even when findings remain."),
    Option(("--exit-non-zero-on-fix",), "exit_non_zero_on_fix", "flag",
           "Exit 1 when a fix was applied, even if no findings remain."),
    Option(("--output-file", "-o"), "output_file", "value", "Write the findings to FILE instead of stdout.",
           metavar="FILE", path=(True, False, False)),
    Option(("--statistics",), "statistics", "flag",
           "Count findings per rule instead of listing them (JSON with --output-format json)."),
    Option(("--stdin-filename",), "stdin_filename", "value",
           "Read the source from stdin, as if it were the file NAME.", metavar="NAME"),
    Option(("--force-exclude",), "force_exclude", "flag", "Apply exclusions to paths named on the command line too."),
    Option(("--unsafe-fixes/--no-unsafe-fixes",), "unsafe_fixes", "pair",
           "Also apply (fix) or offer (check) unsafe fixes."),
    Option(("--show-source",), "show_source", "flag", "Show the offending source line under each finding."),
    Option(("--show-fixes",), "show_fixes", "flag", "List the fixes that were applied."),
    Option(("--quiet", "-q"), "quiet", "flag", "Print findings only, no summary."),
    Option(("--verbose", "-v"), "verbose", "flag", "Show tracebacks of internal errors."),
    Option(("--jobs", "-j"), "jobs", "value", "Worker processes (default: the number of cores; small runs use one).",
           metavar="N", at_least=1),
    Option(("--no-cache",), "no_cache", "flag", "Neither read nor write the result cache."),
    Option(("--cache-dir",), "cache_dir", "value", None,
           path=(False, True, False)),  # the help names the defaults (`gradlint.cli`)
    Option(("--color",), "color", "value", "Colour the output (auto honours NO_COLOR and non-terminals).",
           default="auto", show_default=True, choices=("auto", "always", "never")),
)
_DIFF = Option(("--diff",), "diff", "flag", "Print a unified diff of the fixes and write nothing.")
# After the shared ones, in this order (their order in `--help`).
COMMAND_OPTIONS = {
    "check": (
        Option(("--fix",), "apply_fixes", "flag", "Apply the fixes, as `gradlint fix` does."),
        _DIFF,
        Option(("--add-noqa",), "add_noqa", "flag",
               "Add a suppression comment (# noqa: / // NOLINT()) for every finding, then exit."),
        Option(("--compare-trace",), "compare_trace", "value",
               "List which errors of a `gradlint trace --report FILE` run the findings report.",
               metavar="FILE", path=(True, False, True)),
    ),
    "fix": (_DIFF,),
}
# `paths`, the argument of both: `click.Path()`
PATHS = (True, True, False)
