# gpuscale app: the workload program of the tutorial, in Python (docs/commands/app.md).
#
#   docker build -t gpuscale-app .
#   docker run --rm -p 8080:8080 gpuscale-app
#   curl 'http://127.0.0.1:8080/?value=160'
#
# Everything is installed while the image builds, from wheels only (no compiler in either
# stage); the container starts the installed command and downloads nothing. It runs as an
# unprivileged numeric user, so Kubernetes' runAsNonRoot can verify it.
#
# Only what `gpuscale app` needs: the gpuscale wheel without its dependencies, then the
# few it imports (Typer, rich, prometheus_client, httptools; `python -m
# gpuscale._app_requirements` prints them with pyproject.toml's ranges). The full CLI's
# numpy, matplotlib, Kubernetes and DigitalOcean clients and schemas stay out: the
# environment is ~33 MB instead of ~600 MB (docs/commands/app.md).
#
# No HEALTHCHECK: Kubernetes ignores it and probes /healthz and /readyz itself (see the
# Deployment that `gpuscale init` writes), the slim image has no curl, and a Python-based
# check would start a second interpreter (~20 MB, ~100 ms of CPU) every interval and
# would have to guess the port when --port is passed.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/gpuscale \
 && /opt/gpuscale/bin/pip install --only-binary=:all: --no-deps /wheels/gpuscale-*.whl \
 && /opt/gpuscale/bin/python -m gpuscale._app_requirements > /tmp/app-requirements.txt \
 && /opt/gpuscale/bin/pip install --only-binary=:all: -r /tmp/app-requirements.txt \
 && /opt/gpuscale/bin/pip uninstall --yes pip setuptools

FROM ${PYTHON_IMAGE}
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin gpuscale
COPY --from=build /opt/gpuscale /opt/gpuscale
ENV PATH=/opt/gpuscale/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
ENTRYPOINT ["gpuscale", "app"]
