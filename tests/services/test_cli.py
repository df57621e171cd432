"""Every `skincare` command has help, every option says what it does, and the argument rules
hold; `skincare --help` loads none of the heavy libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from cyclopts import App, CycloptsError

from skincare_services.cli.main import build_app

COMMANDS = [
    ["dev"],
    ["demo"],
    ["migrate"],
    ["token"],
    ["webhook", "sign"],
    ["queue", "stats"],
    ["queue", "pause"],
    ["queue", "resume"],
    ["queue", "paused"],
    ["jobs", "cancel"],
    ["jobs", "run-now"],
    ["jobs", "list"],
    ["jobs", "show"],
    ["schedule", "list"],
    ["dlq", "list"],
    ["dlq", "show"],
    ["dlq", "count"],
    ["dlq", "redrive"],
    ["dlq", "purge"],
    ["ops"],
]
HEAVY = ("litestar", "sqlalchemy", "boto3", "botocore", "fpdf", "alembic", "psycopg")


def _leaves(app: App, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], App]]:
    names = [name for name in app if not name.startswith("-")]
    if not names:
        yield path, app
    for name in names:
        yield from _leaves(app[name], (*path, name))


def test_the_commands_are_these() -> None:
    assert sorted(path for path, _ in _leaves(build_app())) == sorted(map(tuple, COMMANDS))


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert build_app()([*command, "--help"]) is None
    assert f"Usage: skincare {' '.join(command)}" in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_argument_and_option_says_what_it_does(command: list[str]) -> None:
    app = build_app()
    for name in command:
        app = app[name]
    arguments = [a for a in app.assemble_argument_collection(parse_docstring=True) if a.show]
    assert app.help
    assert {a.name: bool(a.parameter.help) for a in arguments} == {a.name: True for a in arguments}


def test_purge_demands_confirmation() -> None:
    with pytest.raises(CycloptsError, match="--yes"):
        build_app()(["dlq", "purge"])


def test_redrive_takes_exactly_one_selector() -> None:
    app = build_app()
    for tokens in (["abc", "--all"], ["--type", "x", "--all"], []):
        with pytest.raises(CycloptsError, match="Exactly 1"):
            app.parse_args(["dlq", "redrive", *tokens])
    _, bound, _ = app.parse_args(["dlq", "redrive", "--type", "process_payment"])
    assert bound.kwargs == {"job_type": "process_payment"}


def test_counts_and_limits_are_never_negative() -> None:
    for tokens in (["dlq", "count", "--max", "-1"], ["dlq", "list", "--limit", "-1"]):
        with pytest.raises(CycloptsError, match=">= 0"):
            build_app().parse_args(tokens)


PROBE = """
import json, sys
from skincare_services.cli.main import main
try:
    main(["--help"])
except SystemExit as exit:
    print(json.dumps({"code": exit.code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_help_loads_none_of_the_heavy_libraries() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    report = json.loads(done.stderr.splitlines()[-1])
    assert report["code"] == 0
    assert "Usage: skincare" in done.stdout
    loaded = {name.split(".")[0] for name in report["modules"]}
    assert sorted(loaded.intersection(HEAVY)) == []
