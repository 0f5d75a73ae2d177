#!/usr/bin/env python3
"""Counts the lines of code of each example and its Python twin, for the README's table.

Usage: python3 scripts/count-lines.py
A line counts when it is not blank and not a comment: Rust `//`, `//!`, `///` lines; Python
`#` lines and the module docstring. Trailing comments do not make a line a comment.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# (example, Rust file, Python twin); a missing file is reported as "-".
PAIRS = [
    ("react_agent", "crates/stategraph/examples/react_agent.rs", "examples/python/react_agent.py"),
    ("map_reduce", "crates/stategraph/examples/map_reduce.rs", "examples/python/map_reduce.py"),
    ("approval", "crates/stategraph/examples/approval.rs", "examples/python/approval.py"),
    ("postgres_agent", "crates/stategraph/examples/postgres_agent.rs", "examples/python/postgres_agent.py"),
]


def rust_lines(text):
    return sum(1 for l in text.splitlines() if l.strip() and not l.strip().startswith("//"))


def python_lines(text):
    skip = set()
    tree = ast.parse(text)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        doc = tree.body[0]
        skip = set(range(doc.lineno, doc.end_lineno + 1))
    return sum(
        1
        for i, l in enumerate(text.splitlines(), 1)
        if i not in skip and l.strip() and not l.strip().startswith("#")
    )


def main():
    print("| example | Rust | Python | ratio |")
    print("|---|---|---|---|")
    for name, rs, py in PAIRS:
        r, p = ROOT / rs, ROOT / py
        nr = rust_lines(r.read_text()) if r.exists() else None
        np = python_lines(p.read_text()) if p.exists() else None
        ratio = f"{nr / np:.2f}" if nr and np else "-"
        print(f"| `{name}` | {nr or '-'} | {np or '-'} | {ratio} |")


if __name__ == "__main__":
    main()
