# kerneljudge: the grader image. Every submission is compiled and run in a container of it (grader/container.py),
# and it also carries the whole grader, so `docker run IMAGE grader ...` works on a node with nothing else.
#
#   make docker                                   the real image: CUDA 13 devel base, PyTorch (CUDA build) from PyPI
#   make docker-local                             the same Dockerfile on a Debian base made here by debootstrap
#                                                 (no registry needed; CPU track only: bookworm has no nvcc)
#   make docker-cuda-local                        the local base with CUDA's compiler, headers and runtime from
#                                                 NVIDIA's wheels on PyPI (CUDA_SOURCE=pypi): the CUDA track, no registry
#
# Build arguments:
#   BASE_IMAGE   an image with apt (Debian or Ubuntu); the default matches nvcc 13. Both stages use it, so the venv's
#                python3 is the same binary in both.
#   TORCH_SPEC   the PyTorch requirement ("torch", "torch==2.13.0+cpu", ...); "none" leaves PyTorch out (an image
#                that can only be a sandbox: the trusted grader outside it computes the references).
#   TORCH_INDEX  an index URL for PyTorch alone, e.g. https://download.pytorch.org/whl/cpu for the CPU wheel;
#                empty: PyPI (whose Linux x86-64 wheel is a CUDA build).
#   WHEELS_URL   a folder of wheels pip may take from (--find-links), e.g. one served on loopback to a
#                `docker build --network host`; empty: none.
#   PIP_CERT_URL a CA bundle pip trusts in the build stage (for a TLS-inspecting proxy); empty: the base's own.
#   CUDA_SOURCE  base: the base image brings CUDA (the official image); pypi: nvcc, its headers and the CUDA runtime
#                come from NVIDIA's wheels on PyPI (CUDA_WHEELS), laid out as a toolkit at CUDA_PREFIX.
ARG BASE_IMAGE=nvidia/cuda:13.0.1-devel-ubuntu24.04

# ---- pip: the base with python3, a venv and pip's configuration ----------------------------------------------
FROM ${BASE_IMAGE} AS pip
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Behind a TLS-inspecting proxy, pip must trust its CA: PIP_CERT_URL names a bundle to fetch (make docker serves
# the one pip on the building machine trusts, $PIP_CERT, on loopback). It stays in this stage only.
ARG PIP_CERT_URL=
RUN if [ -n "$PIP_CERT_URL" ]; then \
      python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], "/opt/build-ca.pem")' "$PIP_CERT_URL" \
      && printf '[global]\ncert = /opt/build-ca.pem\n' > /etc/pip.conf; \
    fi

# ---- cuda: with CUDA_SOURCE=pypi, CUDA's compiler and runtime from NVIDIA's wheels, as a toolkit under /opt/cuda ------
# The wheels' tree (bin, include, lib, nvvm) is the toolkit's; nvcc.profile looks for lib64 and targets/<arch>, which
# become links, and the linker for libcudart.so. The versions match nvcc 13.0 (V13.0.88) and the driver's CUDA 13.
FROM pip AS cuda
ARG CUDA_SOURCE=base
ARG CUDA_WHEELS="nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-cuda-runtime==13.0.96"
ARG CUDA_PREFIX=/usr/local/cuda-13.0
ARG WHEELS_URL=
RUN mkdir -p /opt/cuda && if [ "$CUDA_SOURCE" = pypi ]; then \
      pip install --no-deps --only-binary=:all: --target /tmp/cuda-wheels ${WHEELS_URL:+--find-links "$WHEELS_URL"} $CUDA_WHEELS \
      && mkdir -p "/opt/cuda$(dirname "$CUDA_PREFIX")" && mv /tmp/cuda-wheels/nvidia/cu13 "/opt/cuda$CUDA_PREFIX" \
      && cd "/opt/cuda$CUDA_PREFIX" && rm -rf .metadata && ln -s lib lib64 && ln -s libcudart.so.13 lib/libcudart.so \
      && ln -s libnvvm.so.4 lib/libnvvm.so && mkdir -p targets/x86_64-linux \
      && ln -s ../../include targets/x86_64-linux/include && ln -s ../../lib targets/x86_64-linux/lib \
      && ln -s "$(basename "$CUDA_PREFIX")" /opt/cuda/usr/local/cuda && rm -rf /tmp/cuda-wheels \
      && "/opt/cuda$CUDA_PREFIX/bin/nvcc" --version; \
    elif [ "$CUDA_SOURCE" != base ]; then echo "CUDA_SOURCE is base or pypi, not $CUDA_SOURCE" >&2; exit 1; fi

# ---- build: a venv with PyTorch and the project's dependencies ------------------------------------------------
FROM pip AS build

# PyTorch first, in a layer of its own: the largest and the least often changed. Its C++ tests and headers
# (for building extensions, which the grader never does) are left out: about 145 MB.
ARG TORCH_SPEC=torch
ARG TORCH_INDEX=
ARG WHEELS_URL=
RUN if [ "$TORCH_SPEC" != none ]; then \
      pip install ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} ${WHEELS_URL:+--find-links "$WHEELS_URL"} "$TORCH_SPEC" \
      && rm -rf /opt/venv/lib/python3*/site-packages/torch/test /opt/venv/lib/python3*/site-packages/torch/include; \
    fi

# The other dependencies, from pyproject.toml alone, so that a change to the code does not reinstall them; and
# setuptools, so that the final stage can install the project itself offline.
COPY pyproject.toml /src/pyproject.toml
RUN python3 -c 'import re, tomllib; deps = tomllib.load(open("/src/pyproject.toml", "rb"))["project"]; deps = deps["dependencies"] + deps["optional-dependencies"]["distributed"]; \
print("\n".join(d for d in deps if re.split(r"[ <>=!~;\[]", d)[0].lower() != "torch"))' > /tmp/requirements.txt \
 && pip install ${WHEELS_URL:+--find-links "$WHEELS_URL"} -r /tmp/requirements.txt "setuptools>=64" wheel

# ---- final: the base, the toolchain a submission is compiled with, the venv; nothing of the build -------------------
FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
# python3: the venv's interpreter. g++ (with libgomp, for -fopenmp): the CPU track's compiler and the harness's.
# binutils (nm): the grader's check of what a compiled library imports. The CUDA base brings nvcc, else the cuda
# stage does (empty with CUDA_SOURCE=base).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 g++ libgomp1 binutils \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/share/doc/* /usr/share/man/*
COPY --from=cuda /opt/cuda/ /
# A fixed unprivileged user for `docker run IMAGE ...`; the container sandbox passes its own --user UID:GID.
RUN groupadd --gid 10001 judge \
 && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/judge --shell /usr/sbin/nologin judge \
 && mkdir -p /work && chown judge:judge /work
ENV PATH=/opt/venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}} \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
COPY --from=build /opt/venv /opt/venv
# The project, installed in place at /opt/kerneljudge so that problems/ and solutions/ sit beside the code
# (grader.spec finds them from the package's own folder); only these small layers change with the code.
COPY . /opt/kerneljudge
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps --no-build-isolation --disable-pip-version-check \
      -e /opt/kerneljudge > /dev/null \
 && rm -rf /opt/kerneljudge/build \
 && if [ -e /opt/venv/lib/python3*/site-packages/torch ]; then /opt/venv/bin/grader --help > /dev/null; fi
USER judge
WORKDIR /work
CMD ["grader", "--help"]
