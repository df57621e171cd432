# One build, two images: `docker build --target api .` and `docker build --target worker .`
# BASE_IMAGE: any Debian-like image with python3 (3.11) and useradd; docker/build-local.sh
# builds one from Debian packages where public images cannot be pulled.
ARG BASE_IMAGE=python:3.11-slim
# WHEELHOUSE: an image holding /wheels and the /etc/pip.conf and /etc/uv/uv.toml that install
# from it alone, for builds that cannot reach a package index (docker/build-local.sh makes one).
ARG WHEELHOUSE=scratch

FROM ${WHEELHOUSE} AS wheelhouse

# Locked third-party dependencies only: this stage is rebuilt when uv.lock or a pyproject.toml
# changes, not when the source does.
FROM ${BASE_IMAGE} AS deps
ARG UV_VERSION=0.13.9
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 UV_NO_CACHE=1 UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy VIRTUAL_ENV=/app/.venv
# The whole of it: /wheels and /etc, or nothing from the default `scratch`.
# hadolint ignore=DL3067
COPY --from=wheelhouse / /
RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir "uv==${UV_VERSION}"
WORKDIR /app
COPY pyproject.toml uv.lock ./
COPY packages/skincare-core/pyproject.toml packages/skincare-core/
COPY packages/skincare-postgres/pyproject.toml packages/skincare-postgres/
COPY packages/skincare-sqs/pyproject.toml packages/skincare-sqs/
COPY packages/skincare-http/pyproject.toml packages/skincare-http/
COPY packages/skincare-email/pyproject.toml packages/skincare-email/
COPY packages/skincare-invoice/pyproject.toml packages/skincare-invoice/
COPY packages/skincare-prometheus/pyproject.toml packages/skincare-prometheus/
COPY services/skincare-services/pyproject.toml services/skincare-services/
# The hashes pin every file installed. --frozen, not --locked: an offline build's index settings
# differ from the lock's, so --locked would re-resolve (CI's `uv sync --locked` checks the lock).
RUN /opt/uv/bin/uv export --frozen --no-dev --all-packages --no-emit-workspace \
        --format requirements-txt --output-file /tmp/requirements.txt \
    && /opt/uv/bin/uv venv /app/.venv --python python3 \
    && /opt/uv/bin/uv pip install --require-hashes --requirement /tmp/requirements.txt

# Our packages as wheels, installed into the runtime image as a layer of their own.
FROM deps AS build
COPY packages/ packages/
COPY services/ services/
RUN /opt/uv/bin/uv build --wheel --all-packages --out-dir /app/dist

FROM ${BASE_IMAGE} AS runtime
RUN useradd --no-log-init --create-home --uid 10001 skincare
COPY --from=deps /app/.venv /app/.venv
# The wheels are copied, not mounted: buildah's layer cache ignores what a RUN mounts, and would
# keep the previous install. uv is mounted from the build stage, so it stays out of the image.
COPY --from=build /app/dist/ /app/wheels/
RUN --mount=type=bind,from=build,source=/opt/uv,target=/opt/uv \
    /opt/uv/bin/uv pip install --python /app/.venv/bin/python --no-deps --no-cache \
        --offline --compile-bytecode /app/wheels/*.whl
ENV PATH="/app/.venv/bin:$PATH" PYTHONUNBUFFERED=1
# Numeric, so an orchestrator can check that the user is not root (runAsNonRoot).
USER 10001
WORKDIR /home/skincare

FROM runtime AS api
EXPOSE 8000
ENV SKINCARE_API_HOST=0.0.0.0
# The stdlib probes /healthz: slim images have no curl. Any error or non-2xx exits 1.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as r; r.urlopen('http://127.0.0.1:' + os.environ.get('SKINCARE_API_PORT', '8000') + '/healthz', timeout=4)"]
CMD ["skincare-api"]

FROM runtime AS worker
# /metrics and /healthz; /healthz is 503 once a queue's worker loop has not gone round for
# SKINCARE_WORKER_STALE_SECONDS (60 s by default).
EXPOSE 9100
ENV SKINCARE_METRICS_HOST=0.0.0.0 SKINCARE_METRICS_PORT=9100
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as r; r.urlopen('http://127.0.0.1:' + os.environ['SKINCARE_METRICS_PORT'] + '/healthz', timeout=4)"]
# SIGTERM drains in-flight jobs within SKINCARE_SHUTDOWN_GRACE_SECONDS (ECS stopTimeout above it).
CMD ["skincare-worker"]
