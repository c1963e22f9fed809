# joinops: the Slack bot (`joinops serve`) and the migration worker (`joinops worker`).
#   docker build -t joinops:0.1.0 .                      # from python:3.11-slim on a registry
#   make image                                           # no registry: a base made by debootstrap
# Two stages: the builder makes the wheel from this checkout and installs it into a virtualenv;
# the final image gets only that virtualenv, runs as an unprivileged user and writes nowhere but
# /tmp, so it works with a read-only root filesystem. The default base is pinned to a patch
# release; pin its digest as well (python:3.11.13-slim-bookworm@sha256:...) where your registry
# policy asks for it. PYTHON_IMAGE may name any base with Python 3.11 as `python3` and its venv
# module: `make image` passes localhost/joinops-base:bookworm (scripts/base-image.sh, docs/deploy.md).
ARG PYTHON_IMAGE=docker.io/library/python:3.11.13-slim-bookworm
# The image's version label: pyproject.toml's version and the chart's appVersion (a test checks).
ARG JOINOPS_VERSION=0.1.0

FROM ${PYTHON_IMAGE} AS builder
# A CA bundle for pip, for builds behind a TLS-inspecting proxy (mounted by the build, not copied).
ARG BUILD_CA_BUNDLE=
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY . .
# The kubernetes client requires aiohttp for its asyncio flavour, which joinops never imports
# (tests/deploy/test_dockerfile.py checks that no entry point loads it): ~11 MB left out.
ARG UNUSED="aiohttp aiohttp-retry multidict yarl frozenlist aiosignal aiohappyeyeballs propcache"
# The build tools live in /opt/build, which stays here; /opt/joinops gets no pip of its own.
# The dependencies keep only their bytecode (sourceless .pyc beside where the .py was): the
# kubernetes client alone is 75 MB of source, mostly docstrings. joinops's own packages keep their
# source, so their tracebacks show the lines. No tests, no pip cache.
RUN if [ -n "$BUILD_CA_BUNDLE" ]; then export PIP_CERT="$BUILD_CA_BUNDLE"; fi \
 && python3 -m venv /opt/build \
 && /opt/build/bin/pip wheel --no-deps --wheel-dir /tmp/wheels . \
 && python3 -m venv --without-pip /opt/joinops \
 && /opt/build/bin/pip --python /opt/joinops/bin/python install /tmp/wheels/joinops-*.whl \
 && /opt/build/bin/pip --python /opt/joinops/bin/python uninstall --yes --quiet $UNUSED \
 && site=/opt/joinops/lib/python3.11/site-packages \
 && find "$site" -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} + \
 && own=$(python3 -c 'import tomllib; t = tomllib.load(open("pyproject.toml", "rb")); print("|".join(p.rstrip("*") for p in t["tool"]["setuptools"]["packages"]["find"]["include"]))') \
 && /opt/joinops/bin/python -m compileall -q -b -x "site-packages/($own)/" "$site" \
 && find "$site" -name '*.py' -regextype posix-extended ! -regex ".*/site-packages/($own)/.*" -delete \
 && /opt/joinops/bin/python -m compileall -q "$site"

FROM ${PYTHON_IMAGE}
ARG JOINOPS_VERSION
LABEL org.opencontainers.image.title="joinops" \
      org.opencontainers.image.version="${JOINOPS_VERSION}" \
      org.opencontainers.image.description="Slack ChatOps for moving Kubernetes nodes between kubeadm clusters" \
      org.opencontainers.image.licenses="Apache-2.0"
# No package manager tooling at run time (python:slim's pip, Debian's bundled venv wheels), and
# an unprivileged user with a fixed uid.
RUN if python3 -m pip --version >/dev/null 2>&1; then \
      python3 -m pip uninstall --yes --quiet pip setuptools wheel; fi \
 && rm -rf /usr/share/python-wheels \
 && groupadd --gid 10001 joinops \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin joinops
COPY --from=builder /opt/joinops /opt/joinops
ENV PATH=/opt/joinops/bin:$PATH \
    HOME=/tmp \
    TMPDIR=/tmp \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /tmp
USER 10001:10001
# HTTP mode (`serve --http --port 3000`) listens here; Socket Mode and the worker need no port.
EXPOSE 3000
ENTRYPOINT ["joinops"]
CMD ["serve"]
