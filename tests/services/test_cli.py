"""Every `skincare` command has help, and the argument rules hold."""

import pytest

from skincare_services.cli.main import build_parser

COMMANDS = [
    ["dev"],
    ["demo"],
    ["migrate"],
    ["token"],
    ["webhook", "sign"],
    ["dlq", "list"],
    ["dlq", "show"],
    ["dlq", "redrive"],
    ["dlq", "purge"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--help"])
    assert exited.value.code == 0
    assert "usage: skincare" in capsys.readouterr().out


def test_purge_demands_confirmation() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dlq", "purge"])


def test_redrive_takes_exactly_one_selector() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dlq", "redrive", "abc", "--all"])
    args = build_parser().parse_args(["dlq", "redrive", "--type", "process_payment"])
    assert args.job_type == "process_payment"
