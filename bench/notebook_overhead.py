"""What reading a notebook costs gradlint, against peers measured in the same run.

    python bench/notebook_overhead.py                 # 400 code cells, 30 kB image output each
    python bench/notebook_overhead.py --cells 2000 --image-bytes 0

Two ratios, best of --repeat runs each:
- reading: gradlint's notebook reader (the JSON with the place of every cell source)
  against the standard library's `json.loads` of the same text;
- checking: `Linter.check_path` on the notebook against the same code cells saved as
  one `.py` file (the parse and the rules are the same work; the rest is the notebook).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import random
import tempfile
import time

from gradlint.engine import Linter
from gradlint.notebook.document import read_notebook
from gradlint.settings import Settings, resolve_selection

CELL = [
    "import torch\n",
    "x{n} = torch.randn(8, 8)\n",
    "with torch.no_grad():\n",
    "    y{n} = x{n} @ x{n}.T\n",
    "%time z{n} = y{n}.sum()\n",
    "y{n}.shape",
]


def _notebook(cells: int, image_bytes: int) -> dict:
    rng = random.Random(0)
    content = []
    for n in range(cells):
        content.append({"cell_type": "markdown", "metadata": {}, "source": [f"## Step {n}\n", "Prose.\n"]})
        image = base64.b64encode(rng.randbytes(image_bytes)).decode("ascii")
        outputs = [{"data": {"image/png": image, "text/plain": ["<Figure>"]}, "metadata": {},
                    "output_type": "display_data"}] if image_bytes else []
        content.append({"cell_type": "code", "execution_count": n + 1, "metadata": {}, "outputs": outputs,
                        "source": [line.format(n=n) for line in CELL]})
    return {"cells": content, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def _best(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=400)
    parser.add_argument("--image-bytes", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    document = _notebook(options.cells, options.image_bytes)
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    python = "\n".join("".join(cell["source"]).replace("%time ", "")
                       for cell in document["cells"] if cell["cell_type"] == "code") + "\n"
    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], [])))
    with tempfile.TemporaryDirectory() as folder:
        notebook_path = os.path.join(folder, "bench.ipynb")
        python_path = os.path.join(folder, "bench.py")
        with open(notebook_path, "w", encoding="utf-8") as handle:
            handle.write(text)
        with open(python_path, "w", encoding="utf-8") as handle:
            handle.write(python)
        json_time = _best(lambda: json.loads(text), options.repeat)
        read_time = _best(lambda: read_notebook(text), options.repeat)
        py_time = _best(lambda: linter.check_path(python_path), options.repeat)
        nb_time = _best(lambda: linter.check_path(notebook_path), options.repeat)
    print(f"notebook: {options.cells} code cells, {len(text) / 1e6:.1f} MB of JSON")
    print(f"reading   json.loads {json_time * 1e3:8.1f} ms   gradlint {read_time * 1e3:8.1f} ms   "
          f"ratio {read_time / json_time:.2f}")
    print(f"checking  as .py     {py_time * 1e3:8.1f} ms   as .ipynb {nb_time * 1e3:7.1f} ms   "
          f"ratio {nb_time / py_time:.2f}")


if __name__ == "__main__":
    main()
