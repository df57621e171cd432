"""The documentation's runnable examples run, and print what their pages say they print.

A runnable example is a `python` block whose first line is `# runnable: NAME`, in README.md or
any page under docs/.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"```python\n# runnable: (?P<name>[^\n]+)\n(?P<code>.*?)```", re.S)
EXAMPLES = {m["name"]: m["code"] for page in PAGES for m in _BLOCK.finditer(page.read_text())}
PRINTS = {
    "delayed jobs": "due: remind_unpaid\n",
    "named queues": "process_payment first, with 1000 PDFs waiting on bulk\n",
    "unique jobs": "added: True False\nafter it ran: True\n",
    "cancellation": "cancelled: True\nrunning one cancelled: False\n",
    "periodic jobs": (
        "next run: 2026-12-04 19:30:00+00:00\nenqueued: [['nightly-recount'], [], []]\n"
        "jobs: ['nightly-recount-20261204T193000Z']\n"
    ),
    "rate limits": "second 1000: 10\nsecond 1000: 4\nsecond 1001: 10\nsecond 1001: 4\n",
    "priorities": "resend_confirmation first, with 1000 newsletters waiting\n",
    "concurrency caps": (
        "running: ['expire_unpaid_order', 'send_confirmation_email', 'send_invoice_email']\n"
        "after one send: ['send_confirmation_email']\n"
    ),
    "sync handlers": (
        "done: ['fast']\ndead: TimeoutError: ran longer than the job timeout of 0.1 s\n"
        "the thread ran on: ['fast', 'slow']\n"
    ),
    "snooze": "runs: 3 dead: 0\n",
}


def test_every_scheduling_feature_has_a_runnable_example() -> None:
    assert set(EXAMPLES) == set(PRINTS)


def test_no_two_examples_share_a_name() -> None:
    names = [m["name"] for page in PAGES for m in _BLOCK.finditer(page.read_text())]
    assert sorted(names) == sorted(set(names))


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_the_example_runs_and_prints_what_it_says(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXAMPLES[name]], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == PRINTS[name]
