# The Litmus GitHub Action image. GitHub builds it from this file on each job (`runs.image: Dockerfile`).
# Official slim Debian Python image by tag; Dependabot (docker ecosystem) keeps the tag current.
FROM python:3.11-slim-bookworm

LABEL org.opencontainers.image.title="Litmus" \
      org.opencontainers.image.description="Probe suites for HTTP and LLM-backed APIs, reported in pull requests" \
      org.opencontainers.image.licenses="Apache-2.0"

# git: the changed-files fallback (`git diff`) when the REST API cannot be used.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Dependencies first, from the exact pins: this layer is rebuilt only when requirements.lock changes.
COPY requirements.lock /action/requirements.lock
RUN python -m venv /action/venv \
 && /action/venv/bin/pip install -r /action/requirements.lock

# Then the package itself, without resolving dependencies again.
COPY pyproject.toml README.md /action/build/
COPY src /action/build/src
RUN /action/venv/bin/pip install --no-deps /action/build \
 && rm -rf /action/build

# No USER and no WORKDIR, on purpose: GitHub runs container actions as root (the default user) with the
# workspace mounted at /github/workspace and already set as the working directory; a non-root user could
# not write the report folder or the /github/file_commands files. Hence the absolute exec-form entrypoint.
ENTRYPOINT ["/action/venv/bin/litmus", "action"]
