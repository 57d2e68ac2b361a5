"""Samples shared by the ecosystem tests (a module of its own: every test folder has a
conftest.py, so `from conftest import ...` would depend on collection order)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BAD_PYTHON = (
    "import torch\n"
    "\n"
    "\n"
    "def evaluate(model, batch):\n"
    "    with torch.no_grad:\n"
    "        return model(batch)\n"
)
BAD_CPP = (
    "#include <torch/extension.h>\n"
    "\n"
    "void run() {\n"
    "  at::AutoNonVariableTypeMode g;\n"
    "}\n"
)
