"""The usual command lines of `gradlint check` and `gradlint fix`, read without click: importing
click is about a third of a small run's start-up. What this reads it reads as click does
(`gradlint.command_options` declares the options for both); anything else (--help, an
option it does not know, a value click would refuse, shell completion, Windows) is left to
click, so help and usage errors are click's."""
from __future__ import annotations

import os
import stat
import sys

from gradlint.command_options import COMMAND_OPTIONS, PATHS, SHARED_OPTIONS


def read_command_line(arguments):
    """(command, the keyword arguments click would call it with), or None for click to read."""
    if not arguments or arguments[0] not in COMMAND_OPTIONS or sys.platform == "win32" \
            or os.environ.get("_GRADLINT_COMPLETE"):
        return None
    command = arguments[0]
    options = SHARED_OPTIONS + COMMAND_OPTIONS[command]
    spellings = {name: (option, constant) for option in options for name, constant in option.names().items()}
    values = {option.destination: option.default for option in options}
    paths = []
    rest = iter(arguments[1:])
    for argument in rest:
        if argument == "--":
            paths.extend(rest)
            break
        if argument == "-" or not argument.startswith("-"):
            paths.append(argument)
            continue
        # `--name=value`; a short option only alone (`-q`, `-j 4`: not `-qv` nor `-j4`)
        name, equals, attached = argument.partition("=") if argument.startswith("--") else (argument, "", "")
        option, constant = spellings.get(name, (None, None))
        if option is None:
            return None
        if constant is not None:  # a flag
            if equals:
                return None
            values[option.destination] = constant
            continue
        value = attached if equals else next(rest, None)
        if value is None:
            return None
        if option.kind == "multiple":
            values[option.destination] += (value,)
        else:
            values[option.destination] = value
    for option in options:  # click converts the last value given
        value = values[option.destination]
        if option.kind != "value" or value is None or value == option.default:
            continue
        if option.path and not _path_accepted(option.path, value):
            return None
        if option.choices and value not in option.choices:
            return None
        if option.at_least is not None:
            if not (value.isascii() and value.isdigit()) or int(value) < option.at_least:
                return None
            values[option.destination] = int(value)
    if not all(_path_accepted(PATHS, path) for path in paths):
        return None
    values["paths"] = tuple(paths)
    return command, values


def _path_accepted(checks, path: str) -> bool:
    """What `click.Path(file_okay, dir_okay, exists)` accepts (it also wants what exists readable)."""
    file_okay, dir_okay, exists = checks
    try:
        status = os.stat(path)
    except OSError:
        return not exists
    except ValueError:  # a NUL in the name
        return False
    if (not file_okay and stat.S_ISREG(status.st_mode)) or (not dir_okay and stat.S_ISDIR(status.st_mode)):
        return False
    return os.access(path, os.R_OK)
