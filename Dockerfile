# syntax=docker/dockerfile:1
#
# derender in a container: the wheel built from this checkout, installed in a slim Python image.
#
#   docker build -t derender .
#   docker run --rm -p 8100:8100 -v /path/to/model:/models/my-model:ro derender \
#       /models/my-model --served-model-name my-model --reasoning-parser ... (docs/deployment.md)
#
# Without arguments the container serves the bundled Qwen3 tokenizer, as `derender serve` does.
# Base images are pinned by version; override with --build-arg PYTHON_VERSION=... / RUST_VERSION=...
# Both stages are Debian bookworm, so the wheel's glibc tag fits the runtime by construction.

ARG PYTHON_VERSION=3.11.14
ARG RUST_VERSION=1.95.0
ARG DEBIAN_RELEASE=bookworm

# The Rust toolchain (>= the workspace's rust-version), taken from the official image.
FROM rust:${RUST_VERSION}-slim-${DEBIAN_RELEASE} AS rust

# --- builder: the abi3 wheel ---------------------------------------------------------------
FROM python:${PYTHON_VERSION}-slim-${DEBIAN_RELEASE} AS builder

ENV RUSTUP_HOME=/usr/local/rustup \
    CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=rust /usr/local/rustup /usr/local/rustup
COPY --from=rust /usr/local/cargo /usr/local/cargo

# gcc + libc headers: Oniguruma (the regex engine `tokenizers` builds) is C. Not pinned to a
# package version: bookworm's mirrors drop superseded ones; the release pins gcc 12.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
# Within pyproject's build requirement (maturin>=1.5,<2).
RUN pip install maturin==1.16.0

WORKDIR /src
# Only what the wheel is built from (.dockerignore keeps the rest out of the context):
# the Cargo workspace, the Python package (with the bundled model and the vLLM flag tables
# pyproject's [tool.maturin] include list names) and the metadata files pyproject reads.
COPY Cargo.toml Cargo.lock pyproject.toml README.md LICENSE ./
COPY rust ./rust
COPY python ./python

# --locked: build exactly the dependency versions of Cargo.lock.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    maturin build --release --strip --locked -o /wheels

# --- runtime: the wheel and its Python dependencies, nothing else ---------------------------
FROM python:${PYTHON_VERSION}-slim-${DEBIAN_RELEASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The wheel is bind-mounted from the builder, so no layer keeps a copy of it.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install /wheels/derender-*.whl

# A numeric non-root user, so Kubernetes' runAsNonRoot can verify it.
RUN groupadd --gid 10001 derender \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin derender
USER 10001:10001
WORKDIR /home/derender

EXPOSE 8100
# /health answers 200 once the model is loaded. slim has no curl: Python's urllib (an HTTP
# error or a refused connection raises, so the check fails). Assumes the default port 8100
# inside the container: publish another host port with -p HOST:8100 rather than --port.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8100/health', timeout=4)"]

# --host 0.0.0.0: the default 127.0.0.1 would not be reachable from outside the container.
# Arguments after the image name (a model directory, flags) are appended.
ENTRYPOINT ["derender", "serve", "--host", "0.0.0.0"]
