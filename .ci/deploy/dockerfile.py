"""The Dockerfile read as data, so the checks and the run test use what the image really does.

Only the instructions this project's Dockerfile uses are understood; anything else fails the
lint rather than being skipped silently.
"""

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> Instruction | None:
        found = self.all(keyword)
        return found[-1] if found else None


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: list[Stage]

    @property
    def runtime(self) -> Stage:
        return self.stages[-1]

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)


def _logical_lines(text: str):
    """Joins continuation lines; drops comments (hadolint pragmas included) and blanks."""
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        yield start, buffer
        buffer = ""
    if buffer:
        yield start, buffer


def _expand(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), value)


def parse(path: Path) -> Dockerfile:
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line, text in _logical_lines(path.read_text()):
        keyword, _, rest = text.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "ARG" and not stages:
            name, _, default = rest.partition("=")
            global_args[name] = default
        elif keyword == "FROM":
            parts = rest.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(base=_expand(parts[0], global_args), name=name))
        elif stages:
            stages[-1].instructions.append(Instruction(keyword, rest, line))
        else:
            raise ValueError(f"line {line}: {keyword} before the first FROM")
    return Dockerfile(global_args, stages)


def exec_form(instruction: Instruction) -> list[str]:
    """ENTRYPOINT/CMD/HEALTHCHECK CMD in JSON (exec) form; shell form is refused."""
    args = instruction.args
    if instruction.keyword == "HEALTHCHECK":
        args = args.split(" CMD ", 1)[1] if " CMD " in f" {args}" else ""
        args = args.strip()
    value = json.loads(args)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"line {instruction.line}: not an exec-form JSON array")
    return value


def copy_parts(instruction: Instruction) -> tuple[dict[str, str], list[str], str]:
    """(flags, sources, destination) of a COPY."""
    words = shlex.split(instruction.args)
    flags = {}
    while words and words[0].startswith("--"):
        key, _, value = words.pop(0)[2:].partition("=")
        flags[key] = value
    return flags, words[:-1], words[-1]


def image_tag(reference: str) -> tuple[str, str | None]:
    """(name, tag or digest) of an image reference; tag None when absent."""
    if "@" in reference:
        name, digest = reference.split("@", 1)
        return name, digest
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = reference.rsplit(":", 1)
        return name, tag
    return reference, None
