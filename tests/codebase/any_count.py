"""Counts `typing.Any` in the packages' and services' code: `python -m tests.codebase.any_count`.

Every use is counted, in annotations, aliases, casts and generic arguments (quoted ones too), as
the parser sees the code; imports, comments and docstrings are not, unlike a grep for the word.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("packages/*/src", "services/*/src")


def any_uses(source: str) -> int:
    """How many times `Any` (or `typing.Any`) is used in this module's code."""
    return sum(1 for node in _expressions(ast.parse(source)) if _is_any(node))


def counts(root: Path = ROOT) -> Counter[str]:
    """Uses of Any per file (files without any left out), paths relative to `root`."""
    found: Counter[str] = Counter()
    for pattern in SOURCES:
        for path in sorted(root.glob(f"{pattern}/**/*.py")):
            if uses := any_uses(path.read_text()):
                found[str(path.relative_to(root))] = uses
    return found


def _expressions(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        yield node
        for quoted in _quoted_types(node):
            yield from ast.walk(ast.parse(quoted, mode="eval"))


def _quoted_types(node: ast.AST) -> Iterator[str]:
    # A string in an annotation or assigned as a TypeAlias is a type written in quotes.
    annotation: ast.expr | None = None
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        annotation = node.returns
    elif isinstance(node, ast.arg | ast.AnnAssign):
        annotation = node.annotation
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        yield annotation.value
    if (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and "TypeAlias" in ast.unparse(node.annotation)
    ):
        yield node.value.value


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any"
    )


def main() -> None:
    """Print each file's count, then the total."""
    found = counts()
    for path, uses in found.most_common():
        print(f"{uses:4}  {path}")
    print(f"{sum(found.values()):4}  total")


if __name__ == "__main__":
    main()
