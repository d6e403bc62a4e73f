"""MkDocs hooks for minijax's site: build from a staged copy of docs/ and spec/.

MkDocs takes a single ``docs_dir``, but the site's pages come from docs/, from
spec/ (the specification, beside the code it specifies) and from the source
files the guides link to. Rather than symlinks (which Windows checkouts and
some tools mishandle) or a second copy committed to the repository,
``on_config`` stages a temporary build directory with ``tools/docs_stage.py``
(read its docstring for what goes where and how links are rewritten) and
points ``docs_dir`` at it. The directory is removed when MkDocs exits.
``mkdocs serve`` watches the real directories (``watch:`` in mkdocs.yml) and
re-stages on every rebuild.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_stage import Stager  # noqa: E402

_staged: list[Path] = []


def _cleanup() -> None:
    while _staged:
        shutil.rmtree(_staged.pop(), ignore_errors=True)


atexit.register(_cleanup)


@event_priority(100)  # before every plugin, the i18n plugin included: they see the staged docs_dir
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if any(Path(config.docs_dir) == staged for staged in _staged):
        return config  # the i18n plugin's build of another language: already staged
    _cleanup()  # a rebuild under `mkdocs serve`: the previous stage is done with
    root = Path(config.config_file_path).resolve().parent
    stage = Path(tempfile.mkdtemp(prefix="minijax-docs-"))
    _staged.append(stage)
    Stager(root, stage).run()
    config.docs_dir = str(stage)
    return config


def on_shutdown() -> None:
    _cleanup()
