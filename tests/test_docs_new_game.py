"""docs/new-game.md stays true: its listing is the example module, its Python snippets print
exactly what the page shows, and the .efg it writes starts as the page shows (the
command-line steps the snippets depend on are re-run here)."""

import contextlib
import io
import re
from pathlib import Path

import pytest

from efgkit.cli import main
from efgkit.errors import GameDefinitionError
from efgkit.games.examples import patrol

DOC = Path(__file__).resolve().parent.parent / "docs" / "new-game.md"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str, str, str]]:
    """(language, body, the prose between this block and the next) for every fenced block."""
    text = DOC.read_text()
    matches = list(FENCE.finditer(text))
    result = []
    for index, match in enumerate(matches):
        following = text[match.end():matches[index + 1].start()] if index + 1 < len(matches) else ""
        result.append((match.group(1), match.group(2), following.strip()))
    return result


def _run(snippet: str) -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(snippet, str(DOC), "exec"), {"__name__": "new_game_snippet"})
    return output.getvalue()


def test_the_listing_is_the_example_module():
    language, body, _ = _blocks()[0]
    assert language == "python"
    assert body == Path(patrol.__file__).read_text()


def test_snippets_print_what_the_page_shows(tmp_path, monkeypatch, runner):
    monkeypatch.chdir(tmp_path)
    blocks = _blocks()
    checked = 0
    for index, (language, body, following) in enumerate(blocks[1:], start=1):
        if language != "python":
            continue
        if "CompactStrategy" in body:
            for command in (["refine", "efg:patrol.efg", "--target", "0.01", "--out", "patrol-refined.h5"],
                            ["export", "efg:patrol.efg", "patrol-refined.h5", "-o", "patrol16.efgs",
                             "--bits", "16"]):
                assert runner.invoke(main, command).exit_code == 0
        shown = blocks[index + 1][1]
        if "raises" in following:
            with pytest.raises(GameDefinitionError) as caught:
                _run(body)
            assert f"efgkit.errors.GameDefinitionError: {caught.value}\n" == shown
        elif following == "prints":
            assert _run(body) == shown
        else:
            assert _run(body) == ""
            head = shown.split("\n", 1)[1]  # the console block after `$ head -9 patrol.efg`
            assert Path("patrol.efg").read_text().startswith(head)
        checked += 1
    assert checked == 5
