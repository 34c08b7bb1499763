#!/usr/bin/env python3
"""Checks README.md and docs/: every relative link names a file that exists and, when it
names an anchor in a Markdown file, a heading of that file (GitHub's slugs); and the README's
first screen still holds the two commands a newcomer runs. Exit 1 with one line per fault."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_SCREEN_LINES = 24
FIRST_SCREEN_COMMANDS = ["cargo run --release -- demo", "cargo test"]
OTHER_DIRS = {"deploy", "bench", "mappings"}
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_lines(text):
    """The lines outside fenced code blocks, with inline code removed (links there are text)."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        marker = re.match(r"^\s*(```|~~~)", line)
        if marker:
            if fence is None:
                fence = marker.group(1)
            elif marker.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading):
    text = re.sub(r"<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                base = slug(heading.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def check(path):
    faults = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # absolute URL or mailto: not checked (no network in CI)
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                faults.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                faults.append(f"{where}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}")
    return faults


def main():
    # README.md, docs/, and the Markdown beside the code (deploy/README.md, BENCHMARKS.md, …).
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    files += [path for path in sorted(ROOT.glob("*/**/*.md")) if path.parts[len(ROOT.parts)] in OTHER_DIRS]
    files += [path for path in sorted(ROOT.glob("*.md")) if path not in files]
    faults = [fault for path in files for fault in check(path)]
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").split("\n")[:FIRST_SCREEN_LINES])
    for command in FIRST_SCREEN_COMMANDS:
        if command not in first_screen:
            faults.append(f"README.md: `{command}` is not in its first {FIRST_SCREEN_LINES} lines")
    for fault in faults:
        print(fault, file=sys.stderr)
    print(f"{len(files)} Markdown files checked, {len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
