"""All runnable C++ fixtures, original and fixed, in ONE torch extension.

The generated translation unit includes the torch headers once, then each program's code
in a namespace of its own (`#line` keeps compiler messages pointing at the fixture file),
and one pybind11 entry point per program that calls its `oracle_run()` with the GIL
released (C++ that calls `.backward()` must not hold it: torch-semantics.md, harness note).
Parsing `torch/extension.h` is most of a build, so one build serves every fixture: cold
about 45-50 s on 2 cores; warm (same source, build folder kept) a few seconds, the time to
import torch and hear from ninja that nothing changed.
"""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
BOOTSTRAP = os.path.join(HERE, "oracle_bootstrap.py")
EXTENSION_NAME = "gradlint_oracle_fixtures"
# Headers that fixtures include from their own projects, written for the oracle (declarations
# only, so that the fixture compiles as it would in its project).
SUPPORT_HEADERS = os.path.join(HERE, "cpp_include")

_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([<\"][^>\"]+[>\"])", re.MULTILINE)
_ORACLE_RUN = re.compile(r"\bvoid\s+oracle_run\s*\(\s*(?:void\s*)?\)\s*\{")
_PYBIND_MODULE = re.compile(r"\bPYBIND11_MODULE\s*\(")
_OP_NAMESPACE = re.compile(r"\bTORCH_LIBRARY(?:_FRAGMENT|_IMPL)?\s*\(\s*(\w+)")
# A function of C linkage (a JNI entry point) is one function whatever namespace it is in.
_C_LINKAGE_FUNCTION = re.compile(r'\bextern\s+"C"\s+[^;{}()"]*?\b(\w+)\s*\(')
# Namespaces torch itself registers in (`_` is the catch-all of a fallback): never renamed.
_TORCH_OP_NAMESPACES = frozenset({"_", "aten", "prim", "prims", "c10", "torch"})
_DIAGNOSTIC = re.compile(r"^(?P<path>[^:\n]+):\d+:(?:\d+:)? (?P<kind>fatal error|error|warning|note):",
                         re.MULTILINE)


@dataclass(frozen=True)
class Program:
    """One C++ program to compile: a fixture's original text or gradlint's fix of it."""
    entry: str         # the pybind11 function name, a valid identifier
    path: str          # the file compiler messages name (the fixture, or the fixed text on disk)
    text: str          # defines oracle_run(), unless it is only compiled
    runnable: bool = True  # False: compiled (and linked) only, no entry point


def entry_name(fixture_id: str, variant: str) -> str:
    return re.sub(r"\W", "_", os.path.splitext(fixture_id)[0]) + "__" + variant


def program_problem(text: str) -> Optional[str]:
    """Why a fixture's text cannot go into the shared extension, or None."""
    if _PYBIND_MODULE.search(text):
        return "defines PYBIND11_MODULE; the oracle makes the one module (define oracle_run())"
    return None


def has_oracle_run(text: str) -> bool:
    return _ORACLE_RUN.search(text) is not None


def with_own_op_namespaces(text: str, suffix: str) -> str:
    """The program with every operator namespace it registers in (`TORCH_LIBRARY(ns, m)`,
    `_FRAGMENT`, `_IMPL`) renamed `ns<suffix>`, everywhere it is a word (the C++ namespace of
    the same name and the "ns::op" strings too): the original and the fixed copy of a fixture
    then load side by side in one extension. Without it the second `TORCH_LIBRARY(ns, m)` is
    an error at load time and a second kernel for the same key silently replaces the first."""
    for name in sorted({match.group(1) for match in _OP_NAMESPACE.finditer(text)} - _TORCH_OP_NAMESPACES):
        text = re.sub(rf"\b{re.escape(name)}\b", name + suffix, text)
    return text


def with_own_c_names(text: str, suffix: str) -> str:
    """The program with its `extern "C"` functions renamed `name<suffix>`: C linkage ignores
    the namespace each program is put in, so two copies would define one function twice."""
    for name in sorted({match.group(1) for match in _C_LINKAGE_FUNCTION.finditer(text)}):
        text = re.sub(rf"\b{re.escape(name)}\b", name + suffix, text)
    return text


def torch_include_dirs() -> List[str]:
    spec = importlib.util.find_spec("torch")  # found, not imported: no torch in this process
    if spec is None or not spec.submodule_search_locations:
        return []
    torch_include = os.path.join(list(spec.submodule_search_locations)[0], "include")
    return [torch_include, os.path.join(torch_include, "torch", "csrc", "api", "include")]


def extra_include_dirs() -> List[str]:
    """Where the build looks for headers beyond the compiler's and torch's: the support
    headers, and a JDK's when one is installed (JNI fixtures)."""
    dirs = [SUPPORT_HEADERS]
    java_homes = ([os.environ["JAVA_HOME"]] if os.environ.get("JAVA_HOME") else []) + sorted(
        glob.glob("/usr/lib/jvm/*"))
    for home in java_homes:
        if os.path.exists(os.path.join(home, "include", "jni.h")):
            dirs += [os.path.join(home, "include"), os.path.join(home, "include", "linux")]
            break
    return dirs


_compiler_dirs: Optional[List[str]] = None


def compiler_include_dirs() -> List[str]:
    """The compiler's own search path (`c++ -v` lists it), asked once."""
    global _compiler_dirs
    if _compiler_dirs is None:
        try:
            listing = subprocess.run([os.environ.get("CXX", "c++"), "-xc++", "-E", "-v", os.devnull],
                                     capture_output=True, text=True, timeout=60).stderr
        except (OSError, subprocess.SubprocessError):
            listing = ""
        block = listing.partition("#include <...> search starts here:")[2].partition("End of search list.")[0]
        _compiler_dirs = [line.strip() for line in block.splitlines() if line.strip()]
    return _compiler_dirs


def missing_headers(text: str) -> List[str]:
    """The program's includes that the build would not find: a fixture of an SDK this
    machine lacks (Google Benchmark, say) cannot compile here."""
    search = torch_include_dirs() + extra_include_dirs() + compiler_include_dirs()
    return [match.group(1) for match in _INCLUDE.finditer(text)
            if not any(os.path.exists(os.path.join(folder, match.group(1)[1:-1])) for folder in search)]


OBJC_SOURCES = (".mm",)


def objc_compiler() -> Optional[str]:
    """clang++, which checks Objective-C++ (g++ here has no Objective-C++ front end)."""
    return shutil.which(os.environ.get("OBJCXX", "clang++"))


def objc_problems(path: str, text: str, timeout: float = 900) -> List[str]:
    """The errors clang reports checking an Objective-C++ program (`-fsyntax-only`, against
    the torch headers and the support headers, which stand in for Foundation and the
    LibTorch pod), or [] when it compiles. The program is not linked or run: that needs the
    iOS SDK and a device."""
    command = [objc_compiler() or "clang++", "-x", "objective-c++", "-std=c++17", "-fsyntax-only",
               "-fobjc-runtime=ios-12.0", "-I", SUPPORT_HEADERS]
    for folder in torch_include_dirs():
        command += ["-isystem", folder]
    source = f'#line 1 "{path}"\n{text}'
    process = subprocess.run(command + ["-"], input=source, capture_output=True, text=True, timeout=timeout)
    if process.returncode == 0:
        return []
    errors = [line.strip() for line in process.stderr.splitlines() if " error: " in line]
    return errors or [process.stderr.strip()[-2000:] or f"clang++ exited with {process.returncode}"]


def translation_unit(programs: Sequence[Program]) -> str:
    # header -> where it was first included, so that a missing header is blamed on a fixture
    includes: Dict[str, str] = {header: "" for header in ("<torch/extension.h>", "<cstdio>", "<iostream>")}
    bodies: List[str] = []
    for index, program in enumerate(programs):
        for match in _INCLUDE.finditer(program.text):
            line = program.text.count("\n", 0, match.start()) + 1
            if match.group(1).startswith("<"):
                includes.setdefault(match.group(1), f'#line {line} "{program.path}"\n')
        # Blank the <> includes (keeping the line count): they are hoisted above. A "project"
        # header stays in place, in the program's namespace, like the code it declares for.
        body = _INCLUDE.sub(lambda match: "" if match.group(1).startswith("<") else match.group(0),
                            program.text)
        body = with_own_c_names(with_own_op_namespaces(body, f"_program{index}"), f"_program{index}")
        bodies.append(
            f"namespace gradlint_oracle_{index} {{\n"
            f'#line 1 "{program.path}"\n{body}\n}}  // namespace gradlint_oracle_{index}\n'
        )
    parts = ["// Generated by tests/oracle/oracle_cpp.py: every runnable C++ fixture, one namespace each.\n"]
    parts += [f"{origin}#include {header}\n" for header, origin in includes.items()]
    parts += ['#line 1 "gradlint oracle module"\nnamespace {\n'
              "// Flush on the way out too: a fixture that throws has printed its results so far.\n"
              "struct FlushOutput { ~FlushOutput() { std::cout.flush(); std::fflush(stdout); } };\n}\n\n"]
    parts += bodies
    entries = []
    for index, program in enumerate(programs):
        if not program.runnable:
            continue
        parts.append(
            f'#line 1 "{program.path} (oracle entry point)"\n'
            f"static void {program.entry}() {{ FlushOutput flush; gradlint_oracle_{index}::oracle_run(); }}\n")
        entries.append(f'  m.def("{program.entry}", &{program.entry}, '
                       f"py::call_guard<py::gil_scoped_release>());\n")
    parts.append('#line 1 "gradlint oracle module"\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n')
    parts += entries
    parts.append("}\n")
    return "".join(parts)


def blame(build_log: str, paths: Sequence[str]) -> Dict[str, List[str]]:
    """path -> the compiler errors that belong to it. An error inside a torch header belongs
    to the last program named before it (`In function ...`, `required from here`)."""
    blamed: Dict[str, List[str]] = {}
    known = sorted(set(paths), key=len, reverse=True)
    last_named: Optional[str] = None
    for line in build_log.splitlines():
        named = next((path for path in known if path in line), None)
        if named is not None:
            last_named = named
        match = _DIAGNOSTIC.match(line)
        if match and match.group("kind") in ("error", "fatal error") and last_named is not None:
            blamed.setdefault(last_named, []).append(line.strip())
    return blamed


@dataclass
class BuildResult:
    library: Optional[str]                  # the built module, or None when nothing could be built
    failed: Dict[str, List[str]]            # entry -> compiler errors (left out of the build)
    seconds: float
    builds: int
    log: str = ""


def _write_if_changed(path: str, text: str) -> None:
    # Same text, same mtime: ninja then has nothing to do (the warm build).
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def build(programs: Sequence[Program], build_root: str, timeout: float = 1800) -> BuildResult:
    """Build the one extension. A program that does not compile is reported and left out,
    and the rest is built again (at most twice), so one bad fixture does not sink all.

    Each source gets a folder named by its hash under `build_root`: with one translation
    unit any change is a full rebuild anyway, and two runs over different fixtures (two
    developers, one tree) then never replace the library the other is loading."""
    remaining = list(programs)
    failed: Dict[str, List[str]] = {}
    started = time.monotonic()
    log = ""
    for attempt in range(1, 4):
        text = translation_unit(remaining)
        build_dir = os.path.join(build_root, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
        os.makedirs(build_dir, exist_ok=True)
        source = os.path.join(build_dir, EXTENSION_NAME + ".cpp")
        _write_if_changed(source, text)
        os.utime(build_dir)  # used now: the newest, whatever its age
        _prune(build_root, keep=build_dir)
        process = subprocess.run(
            [sys.executable, BOOTSTRAP, "build", source, build_dir, EXTENSION_NAME,
             json.dumps(extra_include_dirs())],
            capture_output=True, text=True, timeout=timeout,
        )
        log = process.stdout + process.stderr
        if process.returncode == 0:
            library = process.stdout.strip().splitlines()[-1]
            return BuildResult(library, failed, time.monotonic() - started, attempt, log)
        blamed = blame(log, [program.path for program in remaining])
        if not blamed:
            break
        for program in remaining:
            if program.path in blamed:
                failed[program.entry] = blamed[program.path]
        remaining = [program for program in remaining if program.path not in blamed]
        if not remaining:
            break
    return BuildResult(None, failed, time.monotonic() - started, attempt, log)


def _prune(build_root: str, keep: str, kept: int = 3) -> None:
    """Remove all but the newest few builds (about 13 MB each)."""
    folders = [os.path.join(build_root, name) for name in os.listdir(build_root)
               if re.fullmatch(r"[0-9a-f]{16}", name)]
    folders.sort(key=os.path.getmtime, reverse=True)
    for folder in folders[kept:]:
        if folder != keep:
            shutil.rmtree(folder, ignore_errors=True)


def write_source(path: str, text: str) -> str:
    """Put a generated program (a fix) on disk, where compiler messages can point at it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _write_if_changed(path, text)
    return path
