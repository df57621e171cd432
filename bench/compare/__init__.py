"""Side-by-side benchmarks of our queue+worker against pgqueuer and procrastinate (issue 8).

Each scenario is a program: `uv run --group bench python -m bench.compare.<scenario> [--quick]`.
"""
