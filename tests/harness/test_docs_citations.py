"""Every file, section, make target and command the docs and docstrings cite exists.

Read: README.md, ARCHITECTURE.md, docs/*.md, the Unreleased part of CHANGELOG.md (a released
entry records what was true at its release and may name what is gone since), and the docstrings
and comments of every .py file under src/ and tests/. Kinds of citation checked:

- a repository path (`src/...`, `tests/...`, `docs/...`, `spec/...`, `README.md`, ...) or a path
  of a module inside a package (`faults/registry.py`, `app.py`): the file exists; a range of
  numbered files (`name_3.py to _17.py`) names every file of the range and none past it;
- a Markdown link to a file of the repository (and its `#anchor`, a heading of that file);
- a section of a doc: `DOC > Section`, `DOC: Section`, `DOC § Section`, `DOC (Section, ...)`
  and, inside a doc, `(see Section)`: a heading of that doc starts with those words; an entry of
  docs/reading-of-the-spec.md cited by requirement ID (`docs/reading-of-the-spec.md (PLAY-019)`)
  is a row of its table; "README readings/decision" (readings live in that file) is refused, and
  so is a bare "README" that names no section;
- a make target (`make NAME`): a target of the Makefile;
- a command of our command lines (`delivery-conformance SUB`, `delivery-client SUB`,
  `delivery-sandbox`, with their `--flags` on the same line of code): a subcommand and an option
  of its argparse parser.

Docs other than CHANGELOG.md also carry no measured figure ("Measured ...", a load average, a
commit): a measurement is a dated CHANGELOG.md entry, and the doc says which make target takes it.

The extractor is pure text; the last tests feed it a made-up text with one of each kind missing.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_DIRS = ("src", "tests", "docs", "spec", "benchmarks", "loadtests")
TOP_FILES = (
    "README.md", "ARCHITECTURE.md", "CHANGELOG.md", "LICENSE", "Makefile", "MANIFEST.in",
    "pyproject.toml", "setup.py", "redocly.yaml",
)  # fmt: skip
SKIP_DIRS = {".venv", ".git", ".tools", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
OUTPUT_DIRS = {"build", "dist", "reports"}  # at the top: what runs write, never cited as a file
DOC_NAME = r"(?:README(?:\.md)?|ARCHITECTURE(?:\.md)?|CHANGELOG\.md|docs/[\w-]+\.md)"
READINGS = "docs/reading-of-the-spec.md"
REQUIREMENT_ID = re.compile(r"\b[A-Z]{2,6}-\d{3}\b")
# Words that follow "make" or a command name in prose without being a target or a subcommand.
NOT_TARGETS = {
    "a", "an", "it", "its", "the", "them", "those", "this", "that", "one", "go", "sure", "target",
    "targets", "every", "each", "no", "sense", "room", "up", "use",
}  # fmt: skip
NOT_SUBCOMMANDS = {"and", "as", "arguments", "command", "from", "here", "http", "is", "itself",
                   "or", "the", "to", "with", "options", "option", "help", "exits", "prints",
                   "writes", "reads", "runs", "results"}  # fmt: skip
ROOTED_PATH = re.compile(
    r"(?<![\w./<>-])((?:" + "|".join(TOP_DIRS) + r")/[\w./<>{}*-]*[\w/*>}]"
    r"|(?:" + "|".join(re.escape(name) for name in TOP_FILES) + r")(?![\w-]))"
)
MODULE_PATH = re.compile(r"(?<![\w./<>*-])((?!_\d)(?:[a-z_][a-z0-9_]*/)*[a-z_][a-z0-9_]*\.py)\b")
NUMBERED_RANGE = re.compile(r"\b([\w/]*?_?)(\d+)\.py`?\s*(?:to|…|\.\.\.?)\s*`?_(\d+)\.py")
MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")
SECTION = re.compile(
    r"(?P<doc>" + DOC_NAME + r")\)?"
    r"(?:(?P<sep>\s*>\s*|:\s+|,\s+|\s*§\s*)(?P<name>[A-Z][^\n.;:,()`\"'>]*)"
    r"|\s\((?P<inner>[^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\))"
)
SEE = re.compile(r"\(see ([A-Z][\w -]*[\w])\)")
READING_WORDS = re.compile(r"\bREADME,? (?:readings?|decisions?)\b")
BARE_README = re.compile(r"\bREADME\b(?!\.md|'s|’s)")  # a citation of it names a section
MAKE = re.compile(r"\bmake ([a-z][\w-]*)")
COMMAND = re.compile(r"\b(delivery-conformance|delivery-sandbox|delivery-client)\b([^`\n]*)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Text:
    """One piece of prose: where it is, its text, and whether it is code (a fence or a span)."""

    where: str
    text: str
    code: bool = False


@dataclass(frozen=True)
class World:
    """What a citation may point at."""

    files: frozenset[str]  # repository paths, '/'-separated, files and folders
    headings: dict[str, list[str]]  # doc path -> its headings, lower case, numbering dropped
    anchors: dict[str, set[str]]  # doc path -> the anchors of its headings
    readings: str  # the text of docs/reading-of-the-spec.md
    targets: frozenset[str]
    parsers: dict[str, argparse.ArgumentParser]

    def exists(self, path: str) -> bool:
        return path.rstrip("/") in self.files

    def module_exists(self, path: str) -> bool:
        return path in self.files or any(f.endswith("/" + path) for f in self.files)


def _walk(root: Path) -> Iterator[Path]:
    for path in root.iterdir():
        if path.name in SKIP_DIRS or path.name.endswith(".egg-info"):
            continue
        if root == ROOT and path.name in OUTPUT_DIRS:
            continue
        yield path
        if path.is_dir():
            yield from _walk(path)


def normal(heading: str) -> str:
    heading = re.sub(r"^\d+\.\s+", "", heading.strip().strip("`*"))
    return " ".join(heading.lower().replace("`", "").split())


def raw_headings(text: str) -> list[str]:
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6}\s+(.*)", line)):
            found.append(match.group(1))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a heading (lower case, punctuation dropped, spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def doc_path(name: str) -> str:
    return name if name.endswith(".md") else f"{name}.md"


def has_heading(world: World, doc: str, name: str) -> bool:
    """A heading starts with the cited words, or the citation starts with a heading (the prose
    after a citation runs on: `docs/running.md > Exit codes: a target that...`)."""
    wanted = normal(name)
    return any(
        h == wanted
        or (h.startswith(wanted) and h[len(wanted)] in " :(,")
        or (wanted.startswith(h) and wanted[len(h)] in " :(,")
        for h in world.headings.get(doc, [])
    )


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def check_command(world: World, command: str, rest: str, code: bool) -> Iterator[str]:
    parser = world.parsers[command]
    subcommands = _subcommands(parser)
    if rest.startswith(":"):  # `delivery-conformance: ...`, a line the command prints
        return
    words = rest.split()
    sub = None
    first = words[0].strip(".,;:)") if words else ""
    if subcommands and re.fullmatch(r"[a-z][a-z-]*", first) and first not in NOT_SUBCOMMANDS:
        if first not in subcommands:
            yield f"`{command} {first}`: no such subcommand"
            return
        sub = subcommands[first]
    if not code:
        return
    allowed = _options(parser)
    for word in words:
        if sub is None and word in subcommands:
            sub = subcommands[word]
    for chosen in [sub] if sub is not None else subcommands.values():
        allowed |= _options(chosen)
    for word in words:
        flag = re.match(r"(--[a-z][\w-]*)", word)
        if flag and flag.group(1) not in allowed:
            yield f"`{command} ... {flag.group(1)}`: no such option"


def check(world: World, piece: Text, doc: str | None = None) -> Iterator[str]:
    """Every broken citation of one piece of text, as `where: what`."""
    text = MD_LINK.sub(lambda m: _link(doc, m), piece.text)
    problems: list[str] = []
    for match in MD_LINK.finditer(piece.text):
        problems += _check_link(world, doc, match.group(2))
    for match in ROOTED_PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if re.search(r"[<>{}*]|\.\.\.", path) or world.exists(path):
            continue
        if not (path.endswith(".py") and world.module_exists(path)):  # spec/x.py of a package
            problems.append(f"{path}: no such file")
    for match in MODULE_PATH.finditer(text):
        path = match.group(1)
        if path.split("/")[0] not in TOP_DIRS and not world.module_exists(path):
            problems.append(f"{path}: no such module")
    for match in NUMBERED_RANGE.finditer(text):
        stem, first, last = match.group(1), int(match.group(2)), int(match.group(3))
        names = [f"{stem}{n}.py" for n in range(first, last + 2)]
        problems += [
            f"{n}: no such module (range)" for n in names[:-1] if not world.module_exists(n)
        ]
        if world.module_exists(names[-1]):
            problems.append(f"{match.group(0)}: {names[-1]} exists past the range")
    problems += list(_check_sections(world, text, doc))
    sections = {m.start() for m in SECTION.finditer(text)}
    for match in BARE_README.finditer(text):
        if match.start() not in sections and not READING_WORDS.match(text, match.start()):
            problems.append(
                f"{text[match.start() : match.start() + 30]!r}: README cited without a section"
            )
    if reading := READING_WORDS.search(text):
        problems.append(f"{reading.group(0)}: readings live in {READINGS}")
    for match in MAKE.finditer(text):
        target = match.group(1)
        if target not in NOT_TARGETS and target not in world.targets:
            problems.append(f"`make {target}`: no such make target")
    spans = [text] if piece.code else CODE_SPAN.findall(text)
    for span in spans:
        for match in COMMAND.finditer(span):
            problems += check_command(world, match.group(1), match.group(2), code=True)
    if not piece.code:
        prose = CODE_SPAN.sub(" ", text)
        for match in COMMAND.finditer(prose):
            problems += check_command(world, match.group(1), match.group(2), code=False)
    for problem in dict.fromkeys(problems):
        yield f"{piece.where}: {problem}"


def _link(doc: str | None, match: re.Match[str]) -> str:
    """A Markdown link as its target, resolved from the doc's folder (so a section after it reads
    `docs/x.md (Section)`)."""
    target = match.group(2).split("#")[0]
    if doc is None or re.match(r"\w+:", target) or not target:
        return match.group(0)
    resolved = (ROOT / doc).parent.joinpath(target).resolve()
    try:
        return resolved.relative_to(ROOT).as_posix()
    except ValueError:
        return match.group(0)


def _check_link(world: World, doc: str | None, target: str) -> Iterator[str]:
    if doc is None or re.match(r"\w+:", target):
        return
    path, _, anchor = target.partition("#")
    resolved = (ROOT / doc).parent.joinpath(path).resolve() if path else ROOT / doc
    try:
        relative = resolved.relative_to(ROOT).as_posix()
    except ValueError:
        yield f"{target}: link outside the repository"
        return
    if not world.exists(relative):
        yield f"{target}: no such file"
    elif anchor and anchor not in world.anchors.get(relative, set()):
        yield f"{target}: no such heading"


def _check_sections(world: World, text: str, doc: str | None) -> Iterator[str]:
    for match in SECTION.finditer(text):
        cited = doc_path(match.group("doc"))
        if match.group("name") is not None and cited == READINGS and ":" in match.group("sep"):
            names = REQUIREMENT_ID.findall(text[match.start("name") :])  # a list of readings
        elif match.group("name") is not None:
            names = [match.group("name").strip()]
        else:
            names = [part.strip() for part in re.split(r",\s*|\s+and\s+", match.group("inner"))]
            names = [n for n in names if n and n[0].isupper()]
        for name in names:
            ids = REQUIREMENT_ID.findall(name)
            if ids and REQUIREMENT_ID.match(name):
                missing = [i for i in ids if cited != READINGS or i not in world.readings]
                if missing:
                    yield f"{cited} ({', '.join(missing)}): no reading of that ID there"
            elif cited == READINGS:
                if " ".join(name.split()) not in " ".join(world.readings.split()):
                    yield f"{cited} ({name}): no such entry"
            elif cited in world.headings and not has_heading(world, cited, name):
                yield f"{cited} > {name}: no such section"
    if doc is not None:
        for match in SEE.finditer(text):
            if not has_heading(world, doc, match.group(1)):
                yield f"(see {match.group(1)}): no such section in {doc}"


# -- what is read ------------------------------------------------------------------------------


def markdown_pieces(doc: str, text: str) -> Iterator[Text]:
    """A Markdown file as paragraphs of prose and lines of code (a fence, or a span inside)."""
    fenced, paragraph, start = False, [], 1
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield Text(f"{doc}:{number}", line, code=True)
        elif line.strip():
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            yield Text(f"{doc}:{start}", "\n".join(paragraph))
            paragraph = []
    if paragraph:
        yield Text(f"{doc}:{start}", "\n".join(paragraph))


def python_pieces(path: str, source: str) -> Iterator[Text]:
    """The docstrings and comments of a Python file (its other strings are code, not prose)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield Text(f"{path}:{node.body[0].lineno}", docstring)
    comments: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.string.lstrip("#").strip()))
    run: list[tuple[int, str]] = []
    for number, comment in comments:  # consecutive comment lines read as one paragraph
        if run and number != run[-1][0] + 1:
            yield Text(f"{path}:{run[0][0]}", "\n".join(c for _, c in run))
            run = []
        run.append((number, comment))
    if run:
        yield Text(f"{path}:{run[0][0]}", "\n".join(c for _, c in run))


def unreleased(changelog: str) -> str:
    """The Unreleased part of the changelog: released entries are history."""
    return re.split(r"\n## (?!Unreleased)", changelog.split("\n## Unreleased", 1)[1])[0]


def make_targets(makefile: str) -> frozenset[str]:
    targets = set()
    for line in makefile.splitlines():
        if match := re.match(r"([a-z][\w-]*(?:\s+[a-z][\w-]*)*)\s*:(?!=)", line):
            targets.update(match.group(1).split())
    return frozenset(targets)


# The harness self-tests reach the sandbox only as a process (test_architecture.py): its
# parser is read in a child process, which prints its options and subcommands as JSON.
_DUMP_PARSER = """
import argparse, json, sys
from delivery_sandbox.cli import parser
def opts(p):
    return sorted(o for a in p._actions for o in a.option_strings)
top = parser()
subs = {}
for a in top._actions:
    if isinstance(a, argparse._SubParsersAction):
        subs = {name: opts(sub) for name, sub in a.choices.items()}
json.dump({"options": opts(top), "subcommands": subs}, sys.stdout)
"""


def _flag_only(options: list[str], parser: argparse.ArgumentParser) -> None:
    for option in options:
        if option not in ("-h", "--help"):
            parser.add_argument(option, action="store_true")


def sandbox_parser() -> argparse.ArgumentParser:
    """The sandbox CLI's options and subcommands, as read from a child process."""
    done = subprocess.run(
        [sys.executable, "-c", _DUMP_PARSER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dump = json.loads(done.stdout)
    parser = argparse.ArgumentParser(prog="delivery-sandbox")
    _flag_only(dump["options"], parser)
    if dump["subcommands"]:
        sub = parser.add_subparsers()
        for name, options in dump["subcommands"].items():
            _flag_only(options, sub.add_parser(name))
    return parser


def parsers() -> dict[str, argparse.ArgumentParser]:
    from delivery_client.cli import _parser as client_parser
    from delivery_conformance.cli import parser as conformance_parser

    return {
        "delivery-conformance": conformance_parser(),
        "delivery-sandbox": sandbox_parser(),
        "delivery-client": client_parser(),
    }


@cache
def world() -> World:
    files = frozenset(p.relative_to(ROOT).as_posix() for p in _walk(ROOT))
    raw = {
        d: raw_headings((ROOT / d).read_text(encoding="utf-8")) for d in files if d.endswith(".md")
    }
    return World(
        files=files,
        headings={d: [normal(h) for h in found] for d, found in raw.items()},
        anchors={d: {slug(h) for h in found} for d, found in raw.items()},
        readings=(ROOT / READINGS).read_text(encoding="utf-8"),
        targets=make_targets((ROOT / "Makefile").read_text(encoding="utf-8")),
        parsers=parsers(),
    )


def cited_docs() -> dict[str, str]:
    docs = ["README.md", "ARCHITECTURE.md"]
    docs += sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    texts = {d: (ROOT / d).read_text(encoding="utf-8") for d in docs}
    texts["CHANGELOG.md"] = unreleased((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    return texts


def python_files() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix()
        for top in ("src", "tests")
        for p in (ROOT / top).rglob("*.py")
        if not SKIP_DIRS.intersection(p.relative_to(ROOT).parts) and p != Path(__file__)
    )  # this file's docstring describes the forms it reads, with made-up names


# -- the checks --------------------------------------------------------------------------------


def test_every_citation_in_the_docs_exists() -> None:
    problems = [
        problem
        for doc, text in cited_docs().items()
        for piece in markdown_pieces(doc, text)
        for problem in check(world(), piece, doc)
    ]
    assert problems == [], "\n".join(problems)


def test_every_citation_in_docstrings_and_comments_exists() -> None:
    problems = [
        problem
        for path in python_files()
        for piece in python_pieces(path, (ROOT / path).read_text(encoding="utf-8"))
        for problem in check(world(), piece)
    ]
    assert problems == [], "\n".join(problems)


# A measurement written into a doc: it goes stale the day the code changes (CHANGELOG.md keeps it).
MEASUREMENT = re.compile(
    r"\bMeasured\b|\bmeasured (?:on|again|once|with|after)\b|\bload average\b"
    r"|\bcommit [0-9a-f]{7}\b"
)


def measurements(doc: str, text: str) -> Iterator[str]:
    for piece in markdown_pieces(doc, text):
        if not piece.code and (match := MEASUREMENT.search(piece.text)):
            yield f"{piece.where}: {match.group(0)!r}: a measured figure belongs in CHANGELOG.md"


def test_docs_keep_no_measured_figures() -> None:
    """Docs say what is measured and with which make target; the figures are dated entries of
    CHANGELOG.md (or generated)."""
    problems = [
        problem
        for doc, text in cited_docs().items()
        if doc != "CHANGELOG.md"
        for problem in measurements(doc, text)
    ]
    assert problems == [], "\n".join(problems)


def test_the_readme_keeps_no_table_of_former_sections() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Former README section" not in readme and "Moved out of README" not in readme


# -- the extractor can fail --------------------------------------------------------------------

FAKE = World(
    files=frozenset({"README.md", "docs", "docs/suite.md", "src", "src/pkg", "src/pkg/app.py",
                     "src/pkg/faults", "src/pkg/faults/a_1.py", "src/pkg/faults/a_2.py",
                     READINGS}),
    headings={"README.md": ["test my server in ci", "exit codes and verdict words"],
              "docs/suite.md": ["kill rate", "property tests"]},
    anchors={"README.md": {"test-my-server-in-ci", "3-exit-codes-and-verdict-words"}},
    readings="| PLAY-019 (fields) | ... |",
    targets=frozenset({"test", "check"}),
    parsers={"delivery-conformance": argparse.ArgumentParser(prog="delivery-conformance"),
             "delivery-sandbox": argparse.ArgumentParser(prog="delivery-sandbox"),
             "delivery-client": argparse.ArgumentParser(prog="delivery-client")},
)  # fmt: skip
_runner = FAKE.parsers["delivery-conformance"].add_subparsers().add_parser("run")
_runner.add_argument("--strict", action="store_true")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("See `src/pkg/gone.py`.", "src/pkg/gone.py: no such file"),
        ("The hooks in `faults/b_1.py`.", "faults/b_1.py: no such module"),
        ("Blocks `a_1.py` to `_3.py`.", "a_3.py: no such module (range)"),
        ("Blocks a_0.py to _1.py.", "a_2.py exists past the range"),
        ("(README > Requirement proofs)", "README.md > Requirement proofs: no such section"),
        ("docs/suite.md: Blame precision.", "docs/suite.md > Blame precision: no such section"),
        ("see docs/suite.md § Latency", "docs/suite.md > Latency: no such section"),
        ("docs/suite.md (Kill rate, Speed)", "docs/suite.md > Speed: no such section"),
        ("docs/reading-of-the-spec.md (PLAY-020)", "(PLAY-020): no reading of that ID there"),
        (
            "Readings (docs/reading-of-the-spec.md): PLAY-019 (x), CAT-001 (y)",
            "(CAT-001): no reading",
        ),
        ("README (PLAY-019): ...", "README.md (PLAY-019): no reading of that ID there"),
        ("README readings followed: X", "readings live in"),
        ("as the README says", "README cited without a section"),
        ("(README, Intermediaries)", "README.md > Intermediaries: no such section"),
        ("run `make chek` first", "`make chek`: no such make target"),
        ("`delivery-conformance runn --strict`", "`delivery-conformance runn`: no such subcommand"),
        ("`delivery-conformance run --strikt`", "`delivery-conformance ... --strikt`: no such"),
    ],
)
def test_the_extractor_finds_a_missing_citation(text: str, complaint: str) -> None:
    problems = list(check(FAKE, Text("fake.md:1", text)))
    assert any(complaint in problem for problem in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        "See `src/pkg/app.py` and `faults/a_2.py`; blocks `a_1.py` to `_2.py`.",
        "README > Exit codes; docs/suite.md (Kill rate, Property tests); README: Test my server",
        "docs/reading-of-the-spec.md (PLAY-019); `make test`, make sure; make check",
        "`delivery-conformance run --strict`; the delivery-conformance command",
        "Reports go to `reports/latest/junit.xml` and `src/<package>/x.py`.",
    ],
)
def test_the_extractor_accepts_what_exists(text: str) -> None:
    assert list(check(FAKE, Text("fake.md:1", text))) == []


def test_a_measured_figure_in_a_doc_is_found() -> None:
    text = "## Kill rate\n\nMeasured 2026-11-28: 519 of 519 faults caught.\n"
    assert len(list(measurements("docs/x.md", text))) == 1
    assert list(measurements("docs/x.md", "## Kill rate\n\n`make killrate` measures it.\n")) == []


def test_a_link_to_a_missing_heading_fails() -> None:
    def links(text: str) -> list[str]:
        return list(check(FAKE, Text("docs/x.md:1", text), "docs/x.md"))

    assert links("[here](../README.md#reference)") == [
        "docs/x.md:1: ../README.md#reference: no such heading"
    ]
    assert links("[codes](../README.md#3-exit-codes-and-verdict-words)") == []
    assert "docs/x.md:1: gone.md: no such file" in links("[gone](gone.md)")
