"""What `gradlint check` and `gradlint fix` do once their command line is read: by click
(`gradlint.cli`, which also answers --help and usage errors) or, for the usual command
lines, by `gradlint.quick_command_line`, which spares a small run click's import. Nothing
here imports click.

Exit codes: 0 nothing left to report, 1 findings left, 2 usage, configuration,
unreadable input, unwritable output or internal error, 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import os
import sys

from gradlint.config import ConfigError
from gradlint.discovery import DiscoveryError, discover_lazily, relative_path, split_path
from gradlint.engine import FileReport, Linter, exit_code
from gradlint.frontend import language_for
from gradlint.reporters import ReporterOptions, RunResult, format_names, reporter_for
from gradlint.reporters.progress import with_progress
from gradlint.reporters.text import location, shown_path
from gradlint.nearest_config import CACHE_DIR_VARIABLE, CommandLine, SettingsResolver, settings_of, split_codes
from gradlint.exit_status import INTERRUPTED, USAGE_ERROR
from gradlint.result_cache import DEFAULT_CACHE_DIR, code_fingerprint
from gradlint.runner import BESIDE_CONFIGURATION, run_files
from gradlint.settings import SelectionError, Settings
from gradlint.source import SourceError
from gradlint.deferred_import import defer_import
from gradlint.standard_streams import echo, prepare_standard_streams, to_stderr, to_stdout
from gradlint.walk_cache import RememberedWalk

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Iterable, Iterator, Optional, Sequence, Tuple


def start() -> None:
    """What every command does first (`gradlint.cli.main`, the group)."""
    prepare_standard_streams()
    defer_import("libcst")  # loaded only when some file needs parsing


class CommandError(Exception):
    """A usage or configuration error: one line on stderr, exit 2."""

    exit_code = USAGE_ERROR

    def show(self) -> None:
        echo(f"gradlint: error: {self}", err=True)


def command_line_from(options: dict) -> CommandLine:
    return CommandLine(
        select=tuple(split_codes(options["select"])) or None,
        extend_select=tuple(split_codes(options["extend_select"])),
        ignore=tuple(split_codes(options["ignore"])),
        exclude=tuple(split_codes(options.get("exclude", ()))) or None,
        extend_exclude=tuple(split_codes(options.get("extend_exclude", ()))),
        respect_gitignore=options.get("respect_gitignore"),
        unsafe_fixes=options["unsafe_fixes"],
        config_path=options["config_path"],
        isolated=bool(options.get("isolated")),
    )


class _ConfigurationErrors:
    """A broken configuration file or an unknown code, met whenever a file governed by it
    comes up: one line on stderr, exit 2."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if isinstance(error, (ConfigError, SelectionError)):
            raise CommandError(str(error)) from None
        return False


def build_resolver(paths: Sequence[str], options: dict) -> SettingsResolver:
    """Each file's settings; the paths named are resolved now, so that a broken
    configuration of theirs is reported before anything runs."""
    with _ConfigurationErrors():
        resolver = SettingsResolver(command_line_from(options))
        for path in paths or ["."]:
            resolver.for_named(path)
    return resolver


def build_settings(paths: Sequence[str], options: dict) -> Settings:
    """The settings of the first path (or the working folder)."""
    with _ConfigurationErrors():
        return settings_of((paths or ["."])[0], command_line_from(options))


def _use_color(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or "NO_COLOR" in os.environ:
        return False
    return sys.stdout is not None and sys.stdout.isatty()


def _display_paths(paths: Iterable[str]) -> Iterator[str]:
    """Paths under the working directory are shown relative to it (worked out per folder:
    a walk gives a folder's files one after another)."""
    working_folder = os.getcwd()
    if os.sep != "/" or os.altsep is not None:
        shown_folders: dict = {}
        for path in paths:
            folder, name = split_path(path)
            if folder not in shown_folders:
                relative = relative_path(folder or ".", working_folder)
                shown_folders[folder] = None if relative.startswith("..") else relative
            relative = shown_folders[folder]
            yield path if relative is None else name if relative == "." else os.path.join(relative, name)
        return
    last_prefix, shown = None, None
    for path in paths:
        cut = path.rfind("/") + 1
        if path[:cut] != last_prefix:
            last_prefix = path[:cut]
            relative = relative_path(split_path(path)[0] or ".", working_folder)
            # None: shown as given; else what stands for the folder before each name
            shown = None if relative.startswith("..") else "" if relative == "." else relative + "/"
        yield path if shown is None else shown + path[cut:]


def _files(paths: Sequence[str], resolver: SettingsResolver, force_exclude: bool,
           progress: bool = True, quiet: bool = False, verb: str = "Checking",
           cache_dir: Optional[str] = None) -> Tuple[Iterable[str], list]:
    """The files to check, and the list of skipped paths that fills as they are walked.
    Without a progress display the files come lazily: checking starts while the walk
    goes on. `cache_dir` (as `run_files` takes it): where the walk of each named folder is
    remembered (`gradlint.walk_cache`)."""
    remember = None
    if cache_dir is not None:
        def remember(folder: str) -> RememberedWalk:
            directory = cache_dir
            if directory == BESIDE_CONFIGURATION:
                with _ConfigurationErrors():
                    directory = os.path.join(resolver.for_named(folder).root, DEFAULT_CACHE_DIR)
            return RememberedWalk(directory, folder, code_fingerprint())
    try:
        found, files = discover_lazily(paths or ["."], resolver, force_exclude, remember)
    except DiscoveryError as error:
        raise CommandError(str(error)) from None
    shown = _display_paths(files)
    if not progress or quiet or sys.stderr is None or not sys.stderr.isatty():
        return shown, found.skipped
    with _ConfigurationErrors():
        return with_progress(list(shown), verb, quiet), found.skipped


def _report(result: RunResult, options: dict) -> None:
    output_file = options.get("output_file")
    if not output_file:
        _render(result, options, sys.stdout, _use_color(options["color"]))
        return
    try:
        with open(output_file, "w", encoding="utf-8", newline="") as stream:
            _render(result, options, stream, options["color"] == "always")
    except OSError as error:
        raise CommandError(f"{output_file}: cannot write the output file: {error.strerror or error}") from None


def _render(result: RunResult, options: dict, stream, color: bool) -> None:
    format_name = options["output_format"]
    sources = {}
    if options["show_source"]:
        for report in result.reports:
            text = report.fixed if report.fixed is not None else _read_text(report.path)
            if text is not None:
                sources[report.path] = text
    reporter_options = ReporterOptions(
        color=color, show_source=options["show_source"], show_fixes=options["show_fixes"], sources=sources,
    )
    if options["statistics"]:
        _print_statistics(result, format_name, stream)
    else:
        reporter_for(format_name)(stream, reporter_options).render(result)


def _read_text(path: str) -> Optional[str]:
    language = language_for(path)
    try:
        with open(path, "rb") as handle:
            return language.decode(handle.read()).text if language else None
    except Exception:
        return None


def _print_statistics(result: RunResult, format_name: str, stream) -> None:
    """Findings per rule, most first: JSON for the JSON formats, a table for the others."""
    import json
    from collections import Counter

    counts = Counter((finding.code, finding.name) for finding in result.findings)
    fixable = Counter(
        finding.code for finding in result.findings
        if finding.fix is not None and finding.fix.is_applicable(result.unsafe_fixes)
    )
    rows = [{"code": code, "name": name, "count": count, "fixable": fixable[code]}
            for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    if format_name == "json":
        stream.write(json.dumps(rows, indent=2) + "\n")
    elif format_name == "json-lines":
        stream.writelines(json.dumps(row) + "\n" for row in rows)
    else:
        for row in rows:
            marker = " [*]" if row["fixable"] else ""
            stream.write(f"{row['count']:>5}\t{row['code']}\t[{row['name']}]{marker}\n")


def _naming(message: str, path: str) -> str:
    """A message that starts with a file name, the name escaped as findings show it."""
    return shown_path(path) + message[len(path):] if message.startswith(path + ":") else message


def _file_count(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def _summary(result: RunResult, skipped, quiet: bool, file_count: Optional[int] = None) -> None:
    for report in result.reports:
        if report.error:
            echo(f"gradlint: error: {_naming(report.error, report.path)}", err=True)
        for note in report.notes:
            echo(f"gradlint: warning: {_naming(note, report.path)}", err=True)
    for path, reason in skipped:
        echo(f"gradlint: warning: {shown_path(path)}: skipped: {reason}", err=True)
    if quiet:
        return
    findings = result.findings
    files = len(result.reports) if file_count is None else file_count
    checked = _file_count(files)
    if result.mode == "fix":
        applied = len(result.applied_fixes)
        fixed_files = sum(1 for report in result.reports if report.applied_fixes)
        where = f" in {_file_count(fixed_files)}" if applied else ""
        echo(
            f"Fixed {applied} finding{'s' if applied != 1 else ''}{where} ({checked} checked); "
            f"{len(findings)} remaining.", err=True,
        )
        return
    errors = sum(1 for report in result.reports if report.error)
    if not findings:
        if errors:  # "all passed" would hide that some files were not checked
            echo(f"No findings in {checked}; {errors} could not be checked.", err=True)
        else:
            echo(f"All checks passed ({checked}).", err=True)
        return
    safe = sum(1 for f in findings if f.fix is not None and f.fix.is_applicable(False))
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.is_applicable(True)) - safe
    line = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} in {checked}."
    if safe:
        line += f" {safe} fixable with `gradlint fix`."
    if unsafe:
        line += f" {unsafe} more with `gradlint fix --unsafe-fixes`."
    echo(line, err=True)


def _validate_format(options: dict) -> None:
    if options["output_format"] not in format_names():
        raise CommandError(
            f"unknown output format {options['output_format']!r} (choose from {', '.join(format_names())})"
        )


def _stdin_source(name: str):
    language = language_for(name)
    if language is None:
        raise CommandError(f"--stdin-filename {name!r}: not a Python, C++ or notebook file name")
    if sys.stdin is None:
        raise CommandError("--stdin-filename: stdin is closed")
    raw = sys.stdin.buffer.read()
    try:
        return language, language.decode(raw)
    except Exception as error:
        raise CommandError(f"{name}: cannot decode stdin: {error}") from None


def _finish(result: RunResult, options: dict, skipped=(), file_count: Optional[int] = None) -> None:
    code = exit_code(result.reports)
    if options.get("exit_non_zero_on_fix") and result.applied_fixes and code == 0:
        code = 1
    if options["exit_zero"] and code == 1:
        code = 0
    if not to_stdout(lambda: _report(result, options)):
        code = USAGE_ERROR
    to_stderr(lambda: _summary(result, skipped, options["quiet"], file_count))
    sys.exit(code)


def _guarded(function):
    """Turn an unexpected exception into one line on stderr and exit 2."""

    def wrapper(**options):
        try:
            return function(**options)
        except CommandError as error:
            to_stderr(error.show)
            sys.exit(error.exit_code)
        except SystemExit:
            raise
        except KeyboardInterrupt:  # the pool's workers end with their temporaries removed
            to_stderr(lambda: echo("gradlint: interrupted", err=True))
            sys.exit(INTERRUPTED)
        except Exception as error:  # the last line of defence: never a raw traceback
            if options.get("verbose"):
                import traceback

                to_stderr(traceback.print_exc)
            message = f"gradlint: internal error: {type(error).__name__}: {error}"
            to_stderr(lambda: echo(message, err=True))
            sys.exit(USAGE_ERROR)

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


def _stdin_report(options: dict, resolver: SettingsResolver):
    name = options["stdin_filename"]
    if language_for(name) is None:  # before settings are looked up for a name that is none
        _stdin_source(name)
    with _ConfigurationErrors():
        settings = resolver.for_path(name)
    language, source = _stdin_source(name)
    return name, settings, language, source


def _show_and_exit(paths, resolver: SettingsResolver, options: dict) -> None:
    """--show-settings and --show-files: what a run would use, then exit 0."""
    if options["show_settings"]:
        first = (paths or ["."])[0]
        with _ConfigurationErrors():
            settings = resolver.for_named(first)
        echo(settings_text(first, settings), nl=False)
    if options["show_files"]:
        files, skipped = _files(paths, resolver, options["force_exclude"], progress=False)
        with _ConfigurationErrors():
            for path in files:
                echo(path)
        for path, reason in skipped:
            echo(f"gradlint: warning: {path}: skipped: {reason}", err=True)
    sys.exit(0)


def settings_text(path: str, settings: Settings) -> str:
    lines = [
        f"path: {path}",
        f"configuration: {settings.config_path or '(none: defaults)'}",
        f"root: {settings.root}",
        f"select: {', '.join(sorted(settings.enabled))}",
        f"exclude: {', '.join(settings.exclude)}",
        f"extend-exclude: {', '.join(settings.extend_exclude)}",
        f"respect-gitignore: {str(settings.respect_gitignore).lower()}",
        f"unsafe-fixes: {str(settings.unsafe_fixes).lower()}",
        "per-file-ignores: " + "; ".join(f"{pattern} = {', '.join(sorted(codes))}"
                                          for pattern, codes in settings.per_file_ignores),
    ]
    return "\n".join(lines) + "\n"


@_guarded
def check(paths, apply_fixes, diff, add_noqa, compare_trace=None, **options) -> None:
    """Report misused grad-mode guards in PATHS (default: the current folder)."""
    if apply_fixes or diff:
        _fix(paths, diff, options, "Checking")
        return
    _validate_format(options)
    if add_noqa:
        _add_noqa(paths, options)
    resolver = build_resolver(paths, options)
    if options["show_settings"] or options["show_files"]:
        _show_and_exit(paths, resolver, options)
    if options["stdin_filename"] is not None:  # "" is a name too (refused), not "no stdin"
        name, settings, language, source = _stdin_report(options, resolver)
        report = FileReport(name, Linter(settings, verbose=options["verbose"]).check_text(source.text, name, language))
        _finish(RunResult([report], "check", settings.unsafe_fixes, from_stdin=True), options)
    files, skipped = _files(paths, resolver, options["force_exclude"], quiet=options["quiet"],
                            cache_dir=_cache_dir(options))
    outcome = _run(files, resolver, options, "check")
    if compare_trace:
        from gradlint.trace.compare import compare_trace as trace_comparison  # only this option needs it

        sys.exit(trace_comparison(compare_trace, paths or ["."], outcome.reports, echo))
    _finish(RunResult(outcome.reports, "check", _unsafe_fixes(resolver, paths)), options, skipped,
            outcome.file_count)


def _add_noqa(paths, options: dict) -> None:
    """Suppress every current finding in place; exit 0, or 1 when some file keeps findings."""
    from gradlint.add_noqa import add_noqa

    resolver = build_resolver(paths, options)
    files, skipped = _files(paths, resolver, options["force_exclude"], progress=False)
    added, changed, failed = 0, 0, False
    linters = {}
    with _ConfigurationErrors():
        for path in files:
            settings = resolver.for_path(path)
            linter = linters.get(settings) or linters.setdefault(settings, Linter(settings))
            count, note = add_noqa(path, linter)
            added, changed = added + count, changed + bool(count)
            if note:
                failed = True
                echo(f"gradlint: warning: {note}", err=True)
    for path, reason in skipped:
        echo(f"gradlint: warning: {shown_path(path)}: skipped: {reason}", err=True)
    if not options["quiet"]:
        echo(f"Added {added} suppression{'s' if added != 1 else ''} in {changed} "
                   f"file{'s' if changed != 1 else ''}.", err=True)
    sys.exit(1 if failed else 0)


def _unsafe_fixes(resolver: SettingsResolver, paths) -> bool:
    """Whether the summary counts unsafe fixes as applicable: as the first path's settings say."""
    first = (paths or ["."])[0]
    return resolver.for_named(first).unsafe_fixes


@_guarded
def fix(paths, diff, **options) -> None:
    """Apply fixes to PATHS (safe ones; unsafe ones too with --unsafe-fixes)."""
    _fix(paths, diff, options, "Fixing")


def _fix(paths, diff: bool, options: dict, verb: str) -> None:
    _validate_format(options)
    resolver = build_resolver(paths, options)
    if options["show_settings"] or options["show_files"]:
        _show_and_exit(paths, resolver, options)
    if options["stdin_filename"] is not None:  # never touch the disk in stdin mode
        name, settings, language, source = _stdin_report(options, resolver)
        outcome = Linter(settings, verbose=options["verbose"]).fix_text(source.text, name, language)
        try:
            fixed = source.encode(outcome.text)
        except (SourceError, UnicodeError, ValueError) as error:  # an encoding that does not round-trip
            to_stdout(lambda: sys.stdout.buffer.write(source.raw))  # the text as it came
            raise CommandError(f"{name}: {error}") from None
        if diff:
            before, after = source.file_text(source.text), source.file_text(outcome.text)
            written = to_stdout(lambda: _print_diff(name, before, after))
            sys.exit(USAGE_ERROR if not written else 1 if outcome.text != source.text else 0)
        written = to_stdout(lambda: sys.stdout.buffer.write(fixed))
        to_stderr(lambda: [echo(f"{location(finding)}: {finding.code} [{finding.name}] {finding.message}",
                                       err=True) for finding in outcome.findings])
        failed = outcome.findings or (options["exit_non_zero_on_fix"] and outcome.applied)
        sys.exit(USAGE_ERROR if not written else 1 if failed and not options["exit_zero"] else 0)
    files, skipped = _files(paths, resolver, options["force_exclude"], quiet=options["quiet"], verb=verb,
                            cache_dir=_cache_dir(options))
    outcome = _run(files, resolver, options, "fix", write=not diff)
    reports = outcome.reports
    if diff:
        changed = [report for report in reports if report.changed]
        written = to_stdout(lambda: [_print_diff(report.path, *report.diff_texts) for report in changed])
        for report in reports:
            if report.error:
                echo(f"gradlint: error: {_naming(report.error, report.path)}", err=True)
        if not options["quiet"]:
            count = sum(len(report.applied_fixes) for report in changed)
            echo(f"Would fix {count} finding{'s' if count != 1 else ''} in {len(changed)} "
                       f"file{'s' if len(changed) != 1 else ''}.", err=True)
        sys.exit(2 if not written or any(report.error for report in reports) else (1 if changed else 0))
    _finish(RunResult(reports, "fix", _unsafe_fixes(resolver, paths)), options, skipped, outcome.file_count)


def _cache_dir(options: dict) -> Optional[str]:
    """The cache folder as `run_files` takes it: None without a cache."""
    if options["no_cache"]:
        return None
    return options["cache_dir"] or os.environ.get(CACHE_DIR_VARIABLE) or BESIDE_CONFIGURATION


def _run(files, resolver: SettingsResolver, options: dict, mode: str, write: bool = True):
    cache_dir = _cache_dir(options)
    with _ConfigurationErrors():
        outcome = run_files(files, resolver, mode, write=write, jobs=options["jobs"], cache_dir=cache_dir,
                            verbose=options["verbose"])
    if outcome.cache_error:
        echo(f"gradlint: warning: {outcome.cache_error}", err=True)
    return outcome


def _print_diff(path: str, before: str, after: str) -> None:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}",
    )
    for line in lines:
        echo(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n", nl=False)


