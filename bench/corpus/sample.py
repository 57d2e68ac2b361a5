"""Draw the triage sample of a rule with many findings, reproducibly.

    python bench/corpus/sample.py --code GL405 --size 30 --seed 16 [--triage FILE]

Findings at identical code (a notebook copied into every docs version) are one site: the
26 lines from the finding's line, stripped, are its key. The population is the sites whose
rows are all `untriaged` and that have fewer than `--group` copies (larger groups are
triaged whole); the sample is `random.Random(seed).sample` of their sorted first rows.
Prints one `repo<TAB>path<TAB>line` a site, then the group sizes.
"""
from __future__ import annotations

import argparse
import collections
import csv
import hashlib
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import DEFAULT_CORPUS, DEFAULT_MANIFEST, DEFAULT_TRIAGE, load_manifest  # noqa: E402

CONTEXT_LINES = 26
_CELL = re.compile(r"cell (\d+):(\d+)")


def site_lines(tree: str, path: str, line: str):
    """The lines of the finding's file (of its cell in a notebook) and its 1-based line."""
    full = os.path.join(tree, path)
    cell = _CELL.fullmatch(line)
    if cell is not None:
        with open(full, encoding="utf-8") as handle:
            source = json.load(handle)["cells"][int(cell.group(1)) - 1]["source"]
        text = "".join(source) if isinstance(source, list) else source
        return text.splitlines(), int(cell.group(2))
    with open(full, encoding="utf-8", errors="replace") as handle:
        return handle.read().splitlines(), int(line)


def site_key(tree: str, path: str, line: str) -> str:
    lines, number = site_lines(tree, path, line)
    block = "\n".join(text.strip() for text in lines[number - 1:number - 1 + CONTEXT_LINES])
    return hashlib.blake2b(block.encode("utf-8"), digest_size=16).hexdigest()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--group", type=int, default=20, help="sites with this many copies or more are left out")
    parser.add_argument("--triage", default=DEFAULT_TRIAGE)
    parser.add_argument("--manifest", default=DEFAULT_MANIFEST)
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    options = parser.parse_args(argv)
    trees = {repo.name: os.path.join(options.corpus, f"{repo.source.replace('/', '+')}@{repo.commit[:8]}")
             for repo in load_manifest(options.manifest)}
    with open(options.triage, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle, delimiter="\t") if row["code"] == options.code]
    sites = collections.defaultdict(list)
    for row in rows:
        sites[site_key(trees[row["repo"]], row["path"], row["line"])].append(row)
    population = sorted((members[0]["repo"], members[0]["path"], members[0]["line"]) for members in sites.values()
                        if len(members) < options.group and all(m["verdict"] == "untriaged" for m in members))
    for site in random.Random(options.seed).sample(population, min(options.size, len(population))):
        print("\t".join(site))
    sizes = sorted((len(members) for members in sites.values()), reverse=True)
    print(f"# {len(rows)} findings, {len(sites)} sites (largest groups: {sizes[:6]}), "
          f"population {len(population)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
