"""The C++ lexer on adversarial input: long runs of comment openers, quotes, backslashes,
raw-string openers and the like. It must handle 1 MB of each in well under a second and
scale linearly: each line prints the time for 1 MB, the ratio to 1 MB of ordinary C++
lexed in the same run, and the ratio of 1 MB to 100 KB (about 10 when linear).

    python bench/lexer_adversarial.py
"""
from __future__ import annotations

import random
import time
from pathlib import Path

from gradlint.cpp.lexer import lex

MB = 1 << 20
ROOT = Path(__file__).resolve().parents[1]


def _ordinary() -> str:
    files = sorted((ROOT / "fixtures" / "cpp").rglob("*.cpp"))
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in files)


def _random_pieces(pieces, seed: int):
    rng = random.Random(seed)
    return lambda: "".join(rng.choice(pieces) for _ in range(4096))


ADVERSARIAL = {
    "/* runs": lambda: "/*",
    "*/ runs": lambda: "*/",
    "/ runs": lambda: "/",
    "// with continuations": lambda: "//\\\n",
    "double quotes": lambda: '"',
    "single quotes": lambda: "'",
    "backslashes": lambda: "\\",
    "quote backslash newline": lambda: '"\\\n',
    'R"( openers': lambda: 'R"(',
    'R"delim( openers': lambda: 'u8R"abcdefghijklmnop(',
    "unclosed raw string": lambda: 'R"x(' + ")" * 64,
    "# runs": lambda: "#",
    "# continued lines": lambda: "#define X \\\n",
    "indented #": lambda: " " * 63 + "#",
    "digit separators": lambda: "1'",
    "carriage returns": lambda: "\r",
    "random punctuation": _random_pieces(list("/*\"'\\#R()\n\r u8L"), 1),
    "random tokens": _random_pieces(['/*', '*/', '//', '"', "'", "\\", 'R"(', ')"', "#", "\n",
                                     "\\\n", "1'0", "u8", "x", " "], 2),
}


def _sized(piece, size: int) -> str:
    chunk = piece()
    return (chunk * (size // len(chunk) + 1))[:size]


BROKEN = []  # inputs whose blanked code does not keep the length (a lexer bug)


def _seconds(text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        lexed = lex(text)
        best = min(best, time.perf_counter() - start)
    if len(lexed.code) != len(text):
        BROKEN.append(text[:40])
    return best


def main() -> None:
    ordinary = _ordinary()
    baseline = _seconds(_sized(lambda: ordinary, MB))
    print(f"{'input':<26}{'1 MB (ms)':>10}{'vs ordinary':>13}{'1MB/100KB':>11}")
    print(f"{'ordinary C++ (fixtures)':<26}{baseline * 1000:>10.1f}{1.0:>13.2f}"
          f"{baseline / _seconds(_sized(lambda: ordinary, MB // 10)):>11.1f}")
    worst = 0.0
    for name, piece in ADVERSARIAL.items():
        big = _seconds(_sized(piece, MB))
        small = _seconds(_sized(piece, MB // 10))
        worst = max(worst, big)
        print(f"{name:<26}{big * 1000:>10.1f}{big / baseline:>13.2f}{big / small:>11.1f}")
    print(f"slowest adversarial 1 MB: {worst * 1000:.0f} ms")
    if BROKEN:
        print(f"LEXER BUG: {len(BROKEN)} inputs changed length, e.g. {BROKEN[0]!r}")


if __name__ == "__main__":
    main()
