#!/usr/bin/env python3
"""Import circles between the modules of each crate, against an allowlist.

Reads every crate of the workspace (each library, binary and `src/bin/*.rs` root and the
module files it declares, test modules left out) and draws an edge from a module to each
module whose items it names: in `use` declarations and in paths written in the code that
start at `crate::`, `super::`, `self::` or a child module. A name re-exported elsewhere
(`pub use`, the crate root's facade) counts for the module that defines it, so importing
`crate::Value` depends on the value module, not on the root. A circle is a strongly
connected component of that graph with more than one module: modules that all reach each
other through their imports.

The allowlist (scripts/module-cycles.txt) names the circles the tree has today, one per
line, `CRATE: module module ...` (modules as paths from the crate root, `crate` for the
root). The check fails on a circle that no line covers (a new circle, or one that grew) and
on a line that no longer matches a circle exactly (a circle broken or shrunk: the list only
shrinks; `--prune` rewrites those lines to what is left of them).

    python3 scripts/check-module-cycles.py            # check
    python3 scripts/check-module-cycles.py --list     # every circle, with its edges
    python3 scripts/check-module-cycles.py --prune    # drop or narrow the stale lines
    python3 scripts/check-module-cycles.py --self-test  # the scanner on small crates

Python 3 standard library only: a tokenizer that knows Rust's comments, strings, raw strings
and lifetimes, and a resolver for module paths. It does not expand macros: a path inside a
macro invocation counts like any other, a `macro_rules!` used by its bare name (textual
scope) draws no edge.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ALLOWLIST = REPO / "scripts" / "module-cycles.txt"

# ---------------------------------------------------------------------------------------
# Tokens


@dataclass
class Tok:
    kind: str  # "id", "str", "p" (punctuation), "num"
    text: str
    line: int


_PUNCT2 = {"::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "..", "+=", "-=", "*=", "/="}


def tokenize(src: str) -> list[Tok]:
    out: list[Tok] = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += src[i] == "\n"
                    i += 1
        elif (m := re.match(r'b?r(#*)"', src[i:])) and (i == 0 or not _ident_char(src[i - 1])):
            hashes = m.group(1)
            end = src.find('"' + hashes, i + m.end())
            end = n if end < 0 else end
            text = src[i + m.end() : end]
            out.append(Tok("str", text, line))
            line += text.count("\n")
            i = end + 1 + len(hashes)
        elif c == '"' or (c == "b" and src.startswith('b"', i)):
            j = i + (2 if c == "b" else 1)
            start = j
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            text = src[start:j]
            out.append(Tok("str", text, line))
            line += text.count("\n")
            i = j + 1
        elif c == "'" or (c == "b" and src.startswith("b'", i)):
            # A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            j = i + (2 if c == "b" else 1)
            m = re.match(r"(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[j:])
            if m:
                i = j + m.end()
            else:
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", src[j:])
                i = j + (m.end() if m else 0)
                if not m:
                    i += 1
        elif _ident_start(c):
            j = i + 1
            while j < n and _ident_char(src[j]):
                j += 1
            word = src[i:j]
            if word == "r" and src.startswith("#", j) and j + 1 < n and _ident_start(src[j + 1]):
                # A raw identifier: r#type
                k = j + 1
                while k < n and _ident_char(src[k]):
                    k += 1
                word, j = src[j + 1 : k], k
            out.append(Tok("id", word, line))
            i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (_ident_char(src[j]) or (src[j] == "." and j + 1 < n and src[j + 1].isdigit())):
                j += 1
            out.append(Tok("num", src[i:j], line))
            i = j
        else:
            two = src[i : i + 2]
            if two in _PUNCT2:
                out.append(Tok("p", two, line))
                i += 2
            else:
                out.append(Tok("p", c, line))
                i += 1
    return out


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


# ---------------------------------------------------------------------------------------
# Parsing one file: module declarations, use trees, paths, defined names

ModPath = tuple[str, ...]


@dataclass
class Use:
    module: ModPath  # where the declaration is
    path: list[str]  # segments; the last may be "*"
    alias: str | None  # the name it binds (None for globs and `self` imports of modules)
    line: int


@dataclass
class Ref:
    module: ModPath
    path: list[str]
    line: int


@dataclass
class Module:
    path: ModPath
    file: Path
    children: set[str] = field(default_factory=set)
    defined: set[str] = field(default_factory=set)


@dataclass
class Crate:
    name: str  # e.g. "checkpoint-postgres" or "benches/bin/pg_turn"
    root: Path
    modules: dict[ModPath, Module] = field(default_factory=dict)
    uses: list[Use] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)


_ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}
_PATH_ROOTS = {"crate", "super", "self"}


def is_test_attr(attr: list[Tok]) -> bool:
    words = [t.text for t in attr if t.kind == "id"]
    return bool(words) and words[0] == "cfg" and "test" in words and "not" not in words


def attr_path(attr: list[Tok]) -> str | None:
    if len(attr) >= 3 and attr[0].text == "path" and attr[1].text == "=" and attr[2].kind == "str":
        return attr[2].text
    return None


class FileParser:
    """Walks the tokens of one file, with inline modules, into the crate's tables."""

    def __init__(self, crate: Crate, toks: list[Tok], module: ModPath):
        self.crate = crate
        self.toks = toks
        self.i = 0
        self.module = module
        self.declared: list[tuple[str, str | None, int]] = []  # (name, #[path], line)

    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.text == text and t.kind in ("p", "id")

    def parse(self) -> None:
        self.items(self.module, until_brace=False)

    def items(self, module: ModPath, until_brace: bool) -> None:
        attrs: list[list[Tok]] = []
        vis = False
        while self.i < len(self.toks):
            t = self.toks[self.i]
            if t.text == "}" and t.kind == "p":
                self.i += 1
                if until_brace:
                    return
                continue
            if t.text == "#" and (self.at("[", 1) or (self.at("!", 1) and self.at("[", 2))):
                inner = self.at("!", 1)
                self.i += 2 if not inner else 3
                attr = self.balanced("[", "]")
                if inner and is_test_attr(attr):
                    # `#![cfg(test)]`: the whole module is a test module.
                    self.crate.modules[module].defined.add("#test")
                    return
                if not inner:
                    attrs.append(attr)
                continue
            if t.kind == "id" and t.text == "pub":
                vis = True
                self.i += 1
                if self.at("("):
                    self.i += 1
                    self.balanced("(", ")")
                continue
            test = any(is_test_attr(a) for a in attrs)
            if t.kind == "id" and t.text == "use":
                self.i += 1
                tree = self.use_tree_until_semicolon()
                if not test:
                    for path, alias in tree:
                        self.crate.uses.append(Use(module, path, alias, t.line))
                attrs, vis = [], False
                continue
            if t.kind == "id" and t.text == "mod" and self.peek(1) is not None and self.peek(1).kind == "id":
                name = self.peek(1).text
                self.i += 2
                path_attr = next((p for a in attrs if (p := attr_path(a))), None)
                if self.at(";"):
                    self.i += 1
                    if not test:
                        self.declared.append((name, path_attr, t.line))
                        self.crate.modules[module].children.add(name)
                elif self.at("{"):
                    self.i += 1
                    if test:
                        self.skip_to_close()
                    else:
                        child = module + (name,)
                        self.crate.modules[module].children.add(name)
                        self.crate.modules.setdefault(child, Module(child, self.crate.modules[module].file))
                        self.items(child, until_brace=True)
                attrs, vis = [], False
                continue
            if test:
                self.skip_item()
                attrs, vis = [], False
                continue
            if t.kind == "id" and t.text in _ITEM_KEYWORDS and self.peek(1) is not None and self.peek(1).kind == "id":
                self.crate.modules[module].defined.add(self.peek(1).text)
            if t.kind == "id" and t.text == "macro_rules" and self.at("!", 1) and self.peek(2) is not None:
                self.crate.modules[module].defined.add(self.peek(2).text)
            if t.kind == "id" and (t.text in _PATH_ROOTS or t.text in self.crate.modules[module].children) and self.at("::", 1):
                prev = self.toks[self.i - 1] if self.i else None
                if prev is None or prev.text != "::":
                    self.code_path(module)
                    continue
            if t.text in (";", "{"):
                attrs, vis = [], False
            self.i += 1

    def balanced(self, open_: str, close: str) -> list[Tok]:
        """The tokens up to the `close` that matches an already consumed `open_`."""
        depth, start = 1, self.i
        while self.i < len(self.toks):
            t = self.toks[self.i]
            self.i += 1
            if t.kind == "p" and t.text == open_:
                depth += 1
            elif t.kind == "p" and t.text == close:
                depth -= 1
                if depth == 0:
                    return self.toks[start : self.i - 1]
        return self.toks[start:]

    def skip_to_close(self) -> None:
        self.balanced("{", "}")

    def skip_item(self) -> None:
        """Skips one item: to its `;` at depth 0, or past its first `{ … }` (and a `;`)."""
        depth = 0
        while self.i < len(self.toks):
            t = self.toks[self.i]
            self.i += 1
            if t.kind != "p":
                continue
            if t.text in "([":
                depth += 1
            elif t.text in ")]":
                depth -= 1
            elif t.text == ";" and depth == 0:
                return
            elif t.text == "{" and depth == 0:
                self.skip_to_close()
                if self.at(";"):
                    self.i += 1
                return

    def code_path(self, module: ModPath) -> None:
        line = self.toks[self.i].line
        segs = [self.toks[self.i].text]
        self.i += 1
        while self.at("::"):
            nxt = self.peek(1)
            if nxt is None:
                break
            if nxt.kind == "id":
                segs.append(nxt.text)
                self.i += 2
            elif nxt.text == "<":  # turbofish: the path so far names the item
                break
            else:
                break
        self.crate.refs.append(Ref(module, segs, line))

    def use_tree_until_semicolon(self) -> list[tuple[list[str], str | None]]:
        start = self.i
        while self.i < len(self.toks) and not self.at(";"):
            self.i += 1
        body = self.toks[start : self.i]
        self.i += 1
        out: list[tuple[list[str], str | None]] = []
        parse_use_tree(body, 0, [], out)
        return out


def parse_use_tree(toks: list[Tok], i: int, prefix: list[str], out: list) -> int:
    """Parses one use tree from `toks[i]`; appends (path, alias) leaves; returns the end."""
    segs = list(prefix)
    if i < len(toks) and toks[i].text == "::":
        i += 1
    while i < len(toks):
        t = toks[i]
        if t.text == "{":
            i += 1
            while i < len(toks) and toks[i].text != "}":
                i = parse_use_tree(toks, i, segs, out)
                if i < len(toks) and toks[i].text == ",":
                    i += 1
            return i + 1
        if t.text == "*":
            out.append((segs + ["*"], None))
            return i + 1
        if t.kind == "id":
            segs.append(t.text)
            i += 1
            if i < len(toks) and toks[i].text == "::":
                i += 1
                continue
            alias = segs[-1]
            if i + 1 < len(toks) and toks[i].text == "as":
                alias = toks[i + 1].text
                i += 2
            if segs[-1] == "self":
                segs = segs[:-1]
                alias = alias if alias != "self" else (segs[-1] if segs else None)
            out.append((segs, None if alias == "_" else alias))
            return i
        return i + 1
    return i


# ---------------------------------------------------------------------------------------
# Loading a crate


def load_crate(name: str, root_file: Path) -> Crate:
    crate = Crate(name, root_file)
    load_module(crate, (), root_file, mod_rs=True)
    return crate


def load_module(crate: Crate, path: ModPath, file: Path, mod_rs: bool) -> None:
    crate.modules[path] = Module(path, file)
    parser = FileParser(crate, tokenize(file.read_text()), path)
    parser.parse()
    if "#test" in crate.modules[path].defined:
        # `#![cfg(test)]`: drop what was read of it.
        crate.uses = [u for u in crate.uses if u.module[: len(path)] != path]
        crate.refs = [r for r in crate.refs if r.module[: len(path)] != path]
        del crate.modules[path]
        if path:
            crate.modules[path[:-1]].children.discard(path[-1])
        return
    base = file.parent if mod_rs else file.parent / file.stem
    for child, path_attr, _line in parser.declared:
        if path_attr is not None:
            child_file = file.parent / path_attr
            child_mod_rs = child_file.name == "mod.rs"
        elif (base / f"{child}.rs").exists():
            child_file, child_mod_rs = base / f"{child}.rs", False
        elif (base / child / "mod.rs").exists():
            child_file, child_mod_rs = base / child / "mod.rs", True
        else:
            continue  # generated or missing; the compiler reports it
        load_module(crate, path + (child,), child_file, child_mod_rs)


# ---------------------------------------------------------------------------------------
# Resolving paths to the module that defines what they name


class Resolver:
    def __init__(self, crate: Crate):
        self.crate = crate
        # (module, name) -> the Use that binds it there; (module, "*") -> globs
        self.binds: dict[tuple[ModPath, str], Use] = {}
        self.globs: dict[ModPath, list[Use]] = {}
        for u in crate.uses:
            if u.path and u.path[-1] == "*":
                self.globs.setdefault(u.module, []).append(u)
            elif u.alias:
                self.binds.setdefault((u.module, u.alias), u)

    def start(self, module: ModPath, first: str) -> ModPath | None:
        if first == "crate":
            return ()
        if first == "self":
            return module
        if first == "super":
            return module[:-1] if module else None
        if first in self.crate.modules[module].children:
            return module + (first,)
        return None

    def resolve(self, module: ModPath, segs: list[str], seen: frozenset = frozenset()) -> ModPath | None:
        """The module that defines what `segs` (written in `module`) names; None: outside."""
        if not segs:
            return module
        cur = self.start(module, segs[0])
        rest = segs[1:]
        if cur is None:
            # A name bound by a `use` in this module (or an ancestor's, for a child module's
            # bare path there is none: 2018 paths start at a use or a crate).
            bound = self.binds.get((module, segs[0]))
            if bound is None or (module, segs[0]) in seen:
                return None
            target = self.resolve(bound.module, bound.path, seen | {(module, segs[0])})
            if target is None:
                return None
            return self.descend(target, rest, seen) if self.is_module_path(bound) else target
        while cur is not None and rest and rest[0] == "super":
            cur, rest = (cur[:-1] if cur else None), rest[1:]
        if cur is None:
            return None
        return self.descend(cur, rest, seen)

    def is_module_path(self, u: Use) -> bool:
        target = self.resolve_module_only(u.module, u.path)
        return target is not None

    def resolve_module_only(self, module: ModPath, segs: list[str]) -> ModPath | None:
        cur = self.start(module, segs[0]) if segs else module
        if cur is None:
            return None
        for s in segs[1:]:
            if s == "super":
                cur = cur[:-1]
            elif s in self.crate.modules.get(cur, Module(cur, Path())).children:
                cur = cur + (s,)
            else:
                return None
        return cur

    def descend(self, cur: ModPath, rest: list[str], seen: frozenset) -> ModPath:
        for k, s in enumerate(rest):
            mod = self.crate.modules.get(cur)
            if mod is None:
                return cur
            if s == "*":
                return cur
            if s in mod.children:
                cur = cur + (s,)
                continue
            # An item named in `cur`: defined there, or bound there by a use (a re-export).
            if s in mod.defined:
                return cur
            key = (cur, s)
            bound = self.binds.get(key)
            if bound is not None and key not in seen:
                target = self.resolve(bound.module, bound.path, seen | {key})
                if target is None:
                    return cur  # re-exported from outside the crate
                if self.is_module_path(bound):
                    return self.descend(target, rest[k + 1 :], seen | {key})
                return target
            for g in self.globs.get(cur, []):
                gkey = (cur, "*" + "::".join(g.path))
                if gkey in seen:
                    continue
                source = self.resolve_module_only(g.module, g.path[:-1])
                if source is None:
                    continue
                found = self.descend(source, rest[k:], seen | {gkey})
                if found != source or s in self.crate.modules[source].defined or (source, s) in self.binds:
                    return found
            return cur
        return cur


# ---------------------------------------------------------------------------------------
# The graph and its circles


def edges_of(crate: Crate) -> dict[ModPath, dict[ModPath, list[int]]]:
    """module -> depended-on module -> lines (in the module's file)."""
    res = Resolver(crate)
    edges: dict[ModPath, dict[ModPath, list[int]]] = {m: {} for m in crate.modules}
    items = [(u.module, u.path[:-1] if u.path[-1] == "*" else u.path, u.line) for u in crate.uses if u.path]
    items += [(r.module, r.path, r.line) for r in crate.refs]
    for module, segs, line in items:
        target = res.resolve(module, segs) if segs else module
        if target is None or target == module or target not in crate.modules:
            continue
        edges[module].setdefault(target, []).append(line)
    return edges


def circles(edges: dict[ModPath, dict[ModPath, list[int]]]) -> list[list[ModPath]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[ModPath, int] = {}
    low: dict[ModPath, int] = {}
    on: set[ModPath] = set()
    stack: list[ModPath] = []
    out: list[list[ModPath]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def mod_name(p: ModPath) -> str:
    return "::".join(p) if p else "crate"


# ---------------------------------------------------------------------------------------
# The workspace


def crate_roots() -> list[tuple[str, Path]]:
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    roots = []
    for pkg in meta["packages"]:
        pkg_dir = Path(pkg["manifest_path"]).parent
        short = pkg_dir.relative_to(REPO).as_posix().removeprefix("crates/")
        for target in pkg["targets"]:
            kinds = set(target["kind"])
            src = Path(target["src_path"])
            if not kinds & {"lib", "proc-macro", "bin"} or pkg_dir / "src" not in src.parents:
                continue
            name = short if kinds & {"lib", "proc-macro"} else f"{short} (bin {target['name']})"
            roots.append((name, src))
    return sorted(roots)


def read_allowlist() -> list[tuple[str, frozenset[str], int]]:
    out = []
    if not ALLOWLIST.exists():
        return out
    for n, raw in enumerate(ALLOWLIST.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        crate, _, mods = line.partition(":")
        out.append((crate.strip(), frozenset(mods.split()), n))
    return out


def self_test() -> int:
    """The scanner on small crates written here: what it must find and what it must not."""
    import tempfile

    cases = {
        # name: (files, the circles expected)
        "use lines both ways": (
            {"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X; pub struct Y;", "b.rs": "use super::a::Y; pub struct X;"},
            [["a", "b"]],
        ),
        "a path in code, a nested use group": (
            {
                "lib.rs": "mod a; mod b; mod c;",
                "a.rs": "fn f() { crate::b::g(); }",
                "b.rs": "use crate::{c::{Z, W as V}}; pub fn g() {}",
                "c.rs": "pub struct Z; pub struct W; fn h() -> super::b::X { todo!() }",
            },
            [["b", "c"]],
        ),
        "through the root's re-export, to the defining module": (
            {
                "lib.rs": "mod a; mod b; pub use a::Y; pub use b::X;",
                "a.rs": "use crate::X; pub struct Y;",
                "b.rs": "use crate::Y; pub struct X;",
            },
            [["a", "b"]],
        ),
        "a facade that defines what its child uses": (
            {
                "lib.rs": "pub mod v;",
                "v/mod.rs": "mod map; pub use map::Map; pub enum Value {}",
                "v/map.rs": "use super::Value; pub struct Map;",
            },
            [["v", "v::map"]],
        ),
        "comments, strings and test modules draw no edge": (
            {
                "lib.rs": "mod a; mod b;",
                "a.rs": (
                    "// use crate::b::X;\n/* crate::b::X /* nested */ */\n"
                    'const S: &str = "crate::b::X"; const R: &str = r#"use crate::b::X;"#;\n'
                    "fn f<'a>(x: &'a str) -> char { 'c' }\n"
                    "#[cfg(test)]\nmod tests { use crate::b::X; }\n"
                    "#[cfg(test)]\nuse crate::b::X;\n"
                    '#[cfg(test)]\n#[path = "a_tests.rs"]\nmod more;\n'
                    "#[cfg(test)]\nfn helper() { crate::b::X; }\n"
                    "pub struct Y;"
                ),
                "a_tests.rs": "use crate::b::X;",
                "b.rs": "use crate::a::Y; pub struct X;",
            },
            [],
        ),
    }
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, (files, want)) in enumerate(cases.items()):
            src = Path(tmp) / str(n) / "src"
            for rel, text in files.items():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_text(text)
            crate = load_crate(name, src / "lib.rs")
            got = [[mod_name(m) for m in comp] for comp in circles(edges_of(crate))]
            if got != want:
                failed += 1
                print(f"self-test {name!r}: found {got}, expected {want}", file=sys.stderr)
    if failed:
        return 1
    print(f"self-test: {len(cases)} cases")
    return 0


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "--check"
    if mode == "--self-test":
        return self_test()
    if mode not in ("--check", "--list", "--prune"):
        print(__doc__)
        return 2
    found: list[tuple[str, list[ModPath], dict]] = []
    for name, root in crate_roots():
        crate = load_crate(name, root)
        edges = edges_of(crate)
        for comp in circles(edges):
            found.append((name, comp, {m: crate.modules[m].file for m in comp} | {"edges": edges}))
    if mode == "--list":
        for name, comp, info in found:
            print(f"{name}: {' '.join(mod_name(m) for m in comp)}")
            members = set(comp)
            for m in comp:
                for t, lines in sorted(info["edges"][m].items()):
                    if t in members:
                        rel = info[m].relative_to(REPO)
                        print(f"    {mod_name(m)} -> {mod_name(t)}  ({rel}:{','.join(map(str, sorted(set(lines))))})")
        print(f"{len(found)} circles")
        return 0
    allowed = read_allowlist()
    current = [(name, frozenset(mod_name(m) for m in comp)) for name, comp, _ in found]
    new = [(c, mods) for c, mods in current if not any(c == a and mods <= m for a, m, _ in allowed)]
    stale = [(a, m, n) for a, m, n in allowed if (a, m) not in current]
    if mode == "--prune":
        lines = ALLOWLIST.read_text().splitlines()
        replace = {
            n: [f"{c}: {' '.join(sorted(mods))}" for c, mods in current if c == a and mods < m]
            for a, m, n in stale
        }
        kept = [out for n, line in enumerate(lines, 1) for out in replace.get(n, [line])]
        ALLOWLIST.write_text("\n".join(kept) + "\n")
        print(f"{len(replace)} lines of {ALLOWLIST.relative_to(REPO)} dropped or narrowed")
        return 0
    for c, mods in new:
        print(f"a new import circle in {c}: {' '.join(sorted(mods))}", file=sys.stderr)
    for a, m, n in stale:
        print(
            f"{ALLOWLIST.relative_to(REPO)}:{n}: {a}: {' '.join(sorted(m))} is no longer a circle as "
            "listed (broken or shrunk): remove or narrow the line (--prune does)",
            file=sys.stderr,
        )
    if new:
        print("see them with: python3 scripts/check-module-cycles.py --list", file=sys.stderr)
    if new or stale:
        return 1
    print(f"{len(current)} import circles, each in the allowlist; no new one")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
