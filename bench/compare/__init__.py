"""Side-by-side benchmarks of our queue+worker against pgqueuer and procrastinate.

Each scenario is a program: `uv run --group bench python -m bench.compare.<scenario> [--quick]`.
"""
