# One build, two images: `docker build --target api .` and `docker build --target worker .`
FROM python:3.11-slim AS build
RUN pip install --no-cache-dir uv
WORKDIR /app
COPY pyproject.toml uv.lock ./
COPY packages ./packages
COPY services ./services
RUN uv sync --locked --no-dev --all-packages --no-editable

FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 skincare
COPY --from=build /app/.venv /app/.venv
ENV PATH="/app/.venv/bin:$PATH" PYTHONUNBUFFERED=1
USER skincare
WORKDIR /home/skincare

FROM runtime AS api
EXPOSE 8000
ENV SKINCARE_API_HOST=0.0.0.0
CMD ["skincare-api"]

FROM runtime AS worker
# SIGTERM drains in-flight jobs within SKINCARE_SHUTDOWN_GRACE_SECONDS (ECS stopTimeout above it).
CMD ["skincare-worker"]
