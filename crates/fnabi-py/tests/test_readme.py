"""The README's Python session (its `pycon` block) runs as shown: every
`>>>` line is executed by doctest from the repository root and must print
what the README prints."""

from __future__ import annotations

import doctest
import os
import re

from conftest import REPO


def pycon_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, body) of each ```pycon block."""
    blocks = []
    for m in re.finditer(r"^```pycon\n(.*?)^```", text, re.M | re.S):
        blocks.append((text[: m.start()].count("\n") + 1, m.group(1)))
    return blocks


def test_readme_python_session_runs_as_shown(monkeypatch):
    readme = (REPO / "README.md").read_text()
    blocks = pycon_blocks(readme)
    assert blocks, "the README has a Python session"
    monkeypatch.chdir(REPO)
    parser = doctest.DocTestParser()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    for line, body in blocks:
        test = parser.get_doctest(body, {}, "README.md", "README.md", line)
        runner = doctest.DocTestRunner(optionflags=flags)
        out: list[str] = []
        runner.run(test, out=out.append)
        assert runner.failures == 0, f"README.md line {line}:\n" + "".join(out)
    assert os.path.exists("examples/mlp.mlir")
