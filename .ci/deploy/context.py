"""Lays out the Docker build context the Dockerfile's build stage sees, outside Docker.

Usage: python context.py REPO_ROOT DEST
DEST gets the build stage's COPY sources, minus what .dockerignore excludes, plus the stub
benches the Dockerfile creates. Unchanged files keep their mtimes, so cargo rebuilds only what
changed since the last run; files that left the context are removed.
"""

import filecmp
import re
import shutil
import sys
from pathlib import Path

import dockerfile as df
from lint_dockerfile import dockerignore_allows


def main() -> int:
    root, dest = Path(sys.argv[1]), Path(sys.argv[2])
    patterns = [
        line.strip()
        for line in (root / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    build = df.parse(root / "Dockerfile").stages[0]
    wanted: set[Path] = set()
    for copy in build.all("COPY"):
        for source in df.copy_parts(copy)[1]:
            path = root / source
            files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
            for file in files:
                relative = file.relative_to(root).as_posix()
                if dockerignore_allows(patterns, relative):
                    wanted.add(Path(relative))
    # The Dockerfile's stub benches: only the manifest needs them.
    manifest = (root / "Cargo.toml").read_text()
    stubs = {Path(f"benches/{name}.rs") for name in re.findall(r'\[\[bench\]\]\s*name = "([^"]+)"', manifest)}
    for relative in sorted(wanted):
        target = dest / relative
        if not target.exists() or not filecmp.cmp(root / relative, target, shallow=False):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / relative, target)
    for stub in stubs:
        target = dest / stub
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("fn main() {}\n")
    for existing in [p for p in dest.rglob("*") if p.is_file()]:
        if existing.relative_to(dest) not in wanted | stubs:
            existing.unlink()
    print(f"build context: {len(wanted)} files from {', '.join(sorted({p.parts[0] for p in wanted}))}"
          f" + {len(stubs)} stub benches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
