# joinops: the Slack bot (`joinops serve`) and the migration worker (`joinops worker`).
#   docker build -t joinops:0.1.0 .
# Two stages: the builder makes the wheel and installs it into a virtualenv; the final image gets
# only that virtualenv, runs as an unprivileged user and writes nowhere but /tmp, so it works with
# a read-only root filesystem. The base is pinned to a patch release; pin its digest as well
# (python:3.11.13-slim-bookworm@sha256:...) where your registry policy asks for it.
ARG PYTHON_IMAGE=docker.io/library/python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY . .
# The virtualenv gets no pip of its own: the builder's pip installs into it.
RUN python -m venv --without-pip /opt/joinops \
 && python -m pip wheel --no-deps --wheel-dir /tmp/wheels . \
 && python -m pip --python /opt/joinops/bin/python install /tmp/wheels/joinops-*.whl

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="joinops" \
      org.opencontainers.image.description="Slack ChatOps for moving Kubernetes nodes between kubeadm clusters" \
      org.opencontainers.image.licenses="Apache-2.0"
# No package manager tooling at run time, and an unprivileged user with a fixed uid.
RUN python -m pip uninstall --yes --quiet pip setuptools wheel \
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
