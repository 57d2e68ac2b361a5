"""`gradlint check`, `gradlint fix`, `gradlint rule`: click's reading of the command line
(its --help and usage errors). What check and fix then do is `gradlint.commands`;
`gradlint.quick_command_line` reads their usual command lines without click.

Exit codes: 0 nothing left to report, 1 findings left, 2 usage, configuration,
unreadable input, unwritable output or internal error, 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import json

import click

from gradlint import __version__, commands
from gradlint.command_options import COMMAND_OPTIONS, PATHS, SHARED_OPTIONS, Option
from gradlint.commands import build_settings, settings_text  # noqa: F401 (callers import them from here)
from gradlint.exit_status import USAGE_ERROR
from gradlint.nearest_config import CACHE_DIR_VARIABLE
from gradlint.reporters import format_names
from gradlint.result_cache import DEFAULT_CACHE_DIR
from gradlint.trace.command import trace


class GradlintError(click.ClickException):
    """A usage error of `gradlint rule` or `gradlint server`: one line on stderr, exit 2."""

    exit_code = USAGE_ERROR

    def show(self, file=None) -> None:
        click.echo(f"gradlint: error: {self.format_message()}", err=True)


def _path_type(checks):
    file_okay, dir_okay, exists = checks
    return click.Path(file_okay=file_okay, dir_okay=dir_okay, exists=exists)


def _help(option: Option):
    if option.destination == "output_format":
        return "Output format: " + ", ".join(format_names()) + "."
    if option.destination == "cache_dir":
        return (f"Where to keep the result cache (default: ${CACHE_DIR_VARIABLE}, else {DEFAULT_CACHE_DIR} "
                "beside each configuration).")
    return option.help


def _click_option(option: Option):
    settings = {"help": _help(option)}
    if option.metavar:
        settings["metavar"] = option.metavar
    if option.show_default:
        settings["show_default"] = True
    if option.kind == "flag":
        settings["is_flag"] = True
    elif option.kind == "multiple":
        settings["multiple"] = True
    else:
        settings["default"] = option.default
    if option.path:
        settings["type"] = _path_type(option.path)
    elif option.choices:
        settings["type"] = click.Choice(list(option.choices))
    elif option.at_least is not None:
        settings["type"] = click.IntRange(min=option.at_least)
    return click.option(*option.declarations, option.destination, **settings)


def with_options(command: str):
    """The paths argument, the shared options, then the command's own (the order of --help)."""
    def decorate(function):
        declared = [click.argument("paths", nargs=-1, type=_path_type(PATHS))]
        declared += [_click_option(option) for option in SHARED_OPTIONS + COMMAND_OPTIONS[command]]
        for option in reversed(declared):
            function = option(function)
        return function

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gradlint")
def main() -> None:
    """Find and fix misused PyTorch gradient-mode guards in Python and C++."""
    commands.start()


main.command()(with_options("check")(commands.check))
main.command()(with_options("fix")(commands.fix))


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every rule (the default without CODE).")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rule(code, show_all, output_format) -> None:
    """Print the documentation of rule CODE (or of every rule)."""
    from gradlint.docs import rule_json, rule_markdown
    from gradlint.rule import all_rules, rules_by_name

    rules = all_rules()
    if code and not show_all:
        found = rules.get(code.upper()) or rules_by_name().get(code)
        if found is None:
            raise GradlintError(f"unknown rule {code!r}; `gradlint rule` lists them all")
        selected = [found]
    else:
        selected = list(rules.values())
    if output_format == "json":
        data = [rule_json(rule) for rule in selected]
        click.echo(json.dumps(data[0] if code and not show_all else data, indent=2))
    else:
        click.echo("\n".join(rule_markdown(rule) for rule in selected), nl=False)


def run_server() -> None:
    """`gradlint-server`: `gradlint server` for editors whose client takes a bare command."""
    main(["server"])


@main.command()
def server() -> None:
    """Run the Language Server on stdin/stdout (needs `pip install 'gradlint[lsp]'`)."""
    try:
        from gradlint.server import run
    except ImportError as error:
        raise GradlintError(f"the language server needs pygls ({error}): pip install 'gradlint[lsp]'") from None
    run()


main.add_command(trace)

if __name__ == "__main__":  # pragma: no cover
    main()
