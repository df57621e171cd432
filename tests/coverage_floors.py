"""Coverage floors per package: a run measured by pytest-cov fails when one is below its floor.

coverage.py has one `fail_under` for everything it measures; the floors, one per import package,
are in the root pyproject.toml under `[tool.skincare.coverage-floors]`. Runs with `--no-cov`
(the targeted runs) check nothing.
"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import coverage
import coverage.exceptions
import pytest

_RESULTS = pytest.StashKey[dict[str, tuple[float, float]]]()


def floors(pyproject: Path) -> dict[str, float]:
    """Import package -> lowest coverage (percent) the test run accepts."""
    table = tomllib.loads(pyproject.read_text())["tool"]["skincare"]["coverage-floors"]
    return {package: float(floor) for package, floor in table.items()}


def package_percent(cov: coverage.Coverage, package: str) -> float:
    """The statement-and-branch coverage of one package's files, as `coverage report` gives it;
    0 for a package the run never imported (coverage then knows none of its files)."""
    try:
        return cov.report(include=[f"*/src/{package}/*"], file=io.StringIO(), ignore_errors=True)
    except coverage.exceptions.NoDataError:
        return 0.0


def pytest_sessionfinish(session: pytest.Session) -> None:
    """After pytest-cov combined the data: measure each package, fail the run on a miss."""
    cov = _measured(session.config)
    if cov is None:
        return
    results = {
        package: (package_percent(cov, package), floor)
        for package, floor in floors(session.config.rootpath / "pyproject.toml").items()
    }
    session.config.stash[_RESULTS] = results
    if any(percent < floor for percent, floor in results.values()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per package: its coverage and its floor."""
    results = terminalreporter.config.stash.get(_RESULTS, None)
    if results is None:
        return
    terminalreporter.write_sep("-", "coverage floors")
    for package, (percent, floor) in results.items():
        verdict = "ok" if percent >= floor else "BELOW FLOOR"
        line = f"{package:<20} {percent:6.2f} %  floor {floor:.0f} %  {verdict}"
        terminalreporter.write_line(line, red=percent < floor, green=percent >= floor)


def _measured(config: pytest.Config) -> coverage.Coverage | None:
    # An xdist worker holds only its share of the data; the controller checks the combined data.
    if hasattr(config, "workerinput"):
        return None
    plugin = config.pluginmanager.getplugin("_cov")
    controller = getattr(plugin, "cov_controller", None)
    if controller is None or config.option.collectonly:
        return None
    cov: coverage.Coverage = controller.cov
    return cov
