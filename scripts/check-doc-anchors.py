#!/usr/bin/env python3
"""Checks that every `docs/<file>.md#anchor` cited in the sources and docs names a heading
that exists (GitHub's anchor rule: lowercase, punctuation dropped, spaces to dashes).

Usage: python3 scripts/check-doc-anchors.py   (scripts/test.sh runs it)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CITE = re.compile(r"docs/([a-z_-]+\.md)#([a-z0-9-]+)")
SAME = re.compile(r"\]\(#([a-z0-9-]+)\)")


def anchors(md: pathlib.Path) -> set:
    out = set()
    for line in md.read_text().splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(text.replace(" ", "-"))
    return out


def main() -> int:
    bad = []
    files = [p for p in ROOT.glob("crates/**/*") if p.suffix in (".rs", ".md")]
    files += list(ROOT.glob("docs/*.md")) + [ROOT / "README.md"]
    for f in files:
        if "target" in f.parts:
            continue
        text = f.read_text()
        for name, anchor in CITE.findall(text):
            doc = ROOT / "docs" / name
            if not doc.exists() or anchor not in anchors(doc):
                bad.append(f"{f.relative_to(ROOT)}: docs/{name}#{anchor}")
        if f.parent == ROOT / "docs":
            for anchor in SAME.findall(text):
                if anchor not in anchors(f):
                    bad.append(f"{f.relative_to(ROOT)}: #{anchor}")
    for b in bad:
        print("missing anchor:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
