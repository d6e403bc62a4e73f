"""Assemble the documentation site's pages from docs/ and spec/ (no MkDocs needed).

``Stager(root, stage).run()`` fills the directory ``stage`` with:

- a copy of docs/ (the guides, tutorials and Korean pages), at the top;
- a copy of spec/ (the specification, which lives beside the code it
  specifies), under ``spec/``;
- one generated page per repository file or directory the pages link to
  (``../minijax/core.py``), under ``source/``, showing the file, so that
  "read this file next" works in the site too.

Links are written for the repository (plain relative paths, which work on
GitHub and in an editor). While copying, the links that cross from one of
those places to another are rewritten to their staged location, and links
between the English and the Korean pages, which the i18n plugin builds as two
sites, become links to where the other language's page is published. Links
within docs/ (or within spec/) are left exactly as written.

``tools/docs_hooks.py`` runs this before every MkDocs build; tests/test_docs.py
tests the rewriting rules.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
from pathlib import Path

# A markdown link or image target, inline -- ](target) or ](target "title") --
# or a reference definition -- [label]: target. No spaces in the target.
LINK = re.compile(r"(\]\(|^\[[^\]\n]+\]:[ \t]+)([^)\s#]+)((?:#[^)\s]*)?(?:\s+\"[^\"]*\")?\)?)", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)

# Extension -> the language of the code block a source page shows the file in.
SOURCE_LANGUAGES = {".py": "python", ".toml": "toml", ".md": "markdown", ".sh": "bash", ".txt": "text", ".cfg": "ini"}

# The folder of docs/ holding the Korean translations (the i18n plugin's "folder" structure).
KOREAN = "ko"


class Stager:
    """Copies docs/ and spec/ into ``stage`` and rewrites the links between them."""

    def __init__(self, root: Path, stage: Path) -> None:
        self.root = root
        self.stage = stage
        # (real directory, where it goes in the stage), most specific first.
        self.places = [(root / "docs", stage), (root / "spec", stage / "spec")]
        self.sources: set[Path] = set()  # repository files and directories linked to

    def staged_path(self, real: Path) -> Path:
        """Where a file of the repository appears in the staged site."""
        for place, staged in self.places:
            if real == place or place in real.parents:
                return staged / real.relative_to(place)
        self.sources.add(real)
        relative = real.relative_to(self.root)
        if real.is_dir():
            return self.stage / "source" / relative / "index.md"
        return self.stage / "source" / f"{relative}.md"

    def language(self, real: Path) -> str:
        """The language of a page of docs/: "ko" under docs/ko/, else "en"."""
        korean = self.root / "docs" / KOREAN
        return "ko" if korean in real.parents else "en"

    def site_url(self, staged: Path) -> str:
        """The URL path of a staged page, directory-style (``101/jit.md`` -> ``101/jit/``)."""
        relative = staged.relative_to(self.stage).with_suffix("")
        parts = relative.parts[:-1] if relative.name in ("index", "README") else relative.parts
        return "".join(f"{part}/" for part in parts)

    def rewrite_links(self, text: str, real_page: Path, staged_page: Path) -> str:
        def rewrite(match: re.Match[str]) -> str:
            target = match.group(2)
            if "://" in target or target.startswith(("mailto:", "/")):
                return match.group(0)
            real = (real_page.parent / target).resolve()
            if not real.exists() or not (real == self.root or self.root in real.parents):
                return match.group(0)  # MkDocs reports it (a warning, so --strict fails)
            staged = self.staged_path(real)
            if real.suffix == ".md" and real.is_relative_to(self.root / "docs") and self.language(real) != self.language(real_page):
                # A link across languages: each language is built as a site of its
                # own, where the other language's pages are not documentation
                # files. Link to where the page is published instead.
                base = self.site_url(staged_page) or "."
                new = posixpath.relpath(self.site_url(staged) or ".", base)
                new = "./" if new == "." else f"{new}/"
                return f"{match.group(1)}{new}{match.group(3)}"
            # Only links that leave their own part of the tree change.
            if os.path.relpath(real, real_page.parent) == os.path.relpath(staged, staged_page.parent):
                return match.group(0)
            new = Path(os.path.relpath(staged, staged_page.parent)).as_posix()
            return f"{match.group(1)}{new}{match.group(3)}"

        # Code blocks are shown as written: only prose links are rewritten.
        out, last = [], 0
        for fence in FENCE.finditer(text):
            out.append(LINK.sub(rewrite, text[last : fence.start()]))
            out.append(fence.group(0))
            last = fence.end()
        out.append(LINK.sub(rewrite, text[last:]))
        return "".join(out)

    def copy_place(self, place: Path, staged_place: Path) -> None:
        for real in sorted(place.rglob("*")):
            if real.is_dir() or "__pycache__" in real.parts:
                continue
            staged = staged_place / real.relative_to(place)
            staged.parent.mkdir(parents=True, exist_ok=True)
            if real.suffix == ".md":
                text = real.read_text(encoding="utf-8")
                staged.write_text(self.rewrite_links(text, real, staged), encoding="utf-8")
            else:
                shutil.copyfile(real, staged)

    def source_page(self, real: Path) -> str:
        """The text of the page showing a repository file, or listing a directory."""
        title = f"---\nsearch:\n  exclude: true\n---\n\n# `{real.relative_to(self.root).as_posix()}`\n\n"
        if real.is_dir():
            entries = sorted(p for p in real.iterdir() if not p.name.startswith((".", "__")) or p.name == "__init__.py")
            shown = [p for p in entries if p.is_dir() or p.suffix in SOURCE_LANGUAGES]
            # Each entry links to its own page (which staged_path adds to the pages to write).
            lines = [f"- [`{p.name}{'/' if p.is_dir() else ''}`]({self.staged_path(p).relative_to(self.staged_path(real).parent).as_posix()})" for p in shown]
            return title + "The files of this directory of the repository:\n\n" + "\n".join(lines) + "\n"
        code = real.read_text(encoding="utf-8")
        if not code.endswith("\n"):
            code += "\n"
        # A fence longer than any run of backticks in the file.
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
        language = SOURCE_LANGUAGES.get(real.suffix, "text")
        return f'{title}{fence}{language} linenums="1"\n{code}{fence}\n'

    def write_source_pages(self) -> None:
        written: set[Path] = set()
        while self.sources - written:  # listing a directory links to (and so adds) its files
            for real in sorted(self.sources - written):
                text = self.source_page(real)
                staged = self.staged_path(real)
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_text(text, encoding="utf-8")
                written.add(real)

    def run(self) -> None:
        for place, staged_place in self.places:
            self.copy_place(place, staged_place)
        self.write_source_pages()
