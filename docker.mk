# docker.mk: the grader image and grading through it (docs/container.md). Included at the end of the Makefile;
# also works alone: `make -f docker.mk docker-local`.
#
#   make docker                      build IMAGE from the Dockerfile on BASE_IMAGE (default: the CUDA 13 devel image)
#   make docker-base                 a minimal Debian base made here (debootstrap + docker import), no registry
#   make docker-local                docker-base, then the image on it (CPU track; PyTorch from LOCAL_WHEELS if there)
#   make docker-cuda-local           docker-base, then CUDA_IMAGE on it: nvcc and the CUDA runtime from NVIDIA's wheels
#   make docker-host-cuda            CUDA_IMAGE from this host's own g++ and CUDA install, no registry, no network
#                                    (scripts/host_image.py: a GPU host with an engine and nothing to pull or download)
#   make debs                        the distribution's docker.io and every package it depends on, as .debs in DEBS
#                                    (build/docker-debs), for a host with no network (make offline-bundle DOCKER_DEBS=1)
#   make docker-grade PROBLEM=softmax FILE=solutions/softmax/02_openmp.cpp
#                                    grade FILE with every compile and run in a container of IMAGE
#   make docker-clean                remove IMAGE, the local base and its cached tarball

KJ_ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
DOCKER ?= docker
IMAGE ?= kerneljudge:latest
BASE_IMAGE ?= nvidia/cuda:13.0.1-devel-ubuntu24.04
# PyTorch in the image: a pip requirement, or none; TORCH_INDEX an index for it alone (empty: PyPI, a CUDA build).
TORCH_SPEC ?= torch
TORCH_INDEX ?=
# A folder of wheels pip may take from, and a CA bundle pip must trust (a TLS-inspecting proxy; default: the one
# pip here trusts, $$PIP_CERT): both are served on 127.0.0.1:BUILD_PORT to the build for as long as it runs. The
# port is fixed so that the build arguments, and so Docker's layer cache, stay the same from one build to the next.
WHEELS ?=
BUILD_CA ?= $(PIP_CERT)
BUILD_PORT ?= 38517
DOCKER_BUILD_FLAGS ?= --network host

# The local base: debootstrap's minbase of BASE_SUITE, its tarball kept under BASE_CACHE between runs (not required).
LOCAL_BASE ?= kerneljudge-base:bookworm
BASE_SUITE ?= bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian
BASE_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kerneljudge
BASE_TARBALL = $(BASE_CACHE)/base-$(BASE_SUITE)-minbase.tar
# bookworm's Python is 3.11: a PyTorch wheel for it in LOCAL_WHEELS is used, else the local image has no PyTorch.
LOCAL_WHEELS ?= /opt/wheels
LOCAL_TORCH_WHEEL = $(firstword $(wildcard $(LOCAL_WHEELS)/torch-*-cp311-cp311-manylinux*_x86_64.whl))
LOCAL_TORCH_SPEC = $(if $(LOCAL_TORCH_WHEEL),torch==$(word 2,$(subst -, ,$(notdir $(LOCAL_TORCH_WHEEL)))),none)

# CUDA: from the base image (the official one), or from NVIDIA's wheels on PyPI (pypi; the local CUDA image).
CUDA_SOURCE ?= base
CUDA_WHEELS ?= nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-cccl==13.0.85 \
  nvidia-cuda-runtime==13.0.96
CUDA_IMAGE ?= kerneljudge-cuda:local
CUDA_TORCH_SPEC ?= none
# The engine's packages for a host with no network: ENGINE_DEBS and the whole closure of what they depend on (the
# alternatives too; apt on the host picks among them, and installs only what it lacks: scripts/offline_install.sh).
# Made with this machine's apt sources, so on a machine of the GPU host's distribution and release.
DEBS ?= build/docker-debs
ENGINE_DEBS ?= docker.io
PYTHON3 ?= $(or $(wildcard $(KJ_ROOT)/.venv/bin/python),python3)

PROBLEM ?= softmax
GRADE_MODE ?= submit
GRADER ?= grader

.PHONY: docker docker-base docker-local docker-cuda-local docker-host-cuda debs docker-grade docker-clean

docker: ## the grader image IMAGE from the Dockerfile on BASE_IMAGE (docs/container.md)
	@set -e; wheels_url=""; cert_url=""; \
	if [ -n "$(WHEELS)$(BUILD_CA)" ]; then \
	  serve=$$(mktemp -d); url=http://127.0.0.1:$(BUILD_PORT); \
	  if [ -n "$(WHEELS)" ]; then ln -s "$(abspath $(WHEELS))"/*.whl "$$serve"/; wheels_url=$$url/; fi; \
	  if [ -n "$(BUILD_CA)" ]; then cp "$(BUILD_CA)" "$$serve/ca.pem"; cert_url=$$url/ca.pem; fi; \
	  python3 -m http.server --bind 127.0.0.1 --directory "$$serve" $(BUILD_PORT) > /dev/null 2>&1 & server=$$!; \
	  trap 'kill $$server 2> /dev/null; rm -rf "$$serve"' EXIT INT TERM; \
	  python3 -c 'import socket, sys, time; up = lambda: socket.socket().connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0; any(up() or time.sleep(0.1) for _ in range(100))' $(BUILD_PORT); \
	  kill -0 $$server 2> /dev/null || { echo "could not serve the build's files on 127.0.0.1:$(BUILD_PORT) (busy? set BUILD_PORT)" >&2; exit 1; }; \
	fi; \
	echo "building $(IMAGE) on $(BASE_IMAGE) (PyTorch: $(TORCH_SPEC)$(if $(TORCH_INDEX), from $(TORCH_INDEX))$(if $(WHEELS), wheels from $(WHEELS))$(if $(BUILD_CA), trusting $(BUILD_CA)))"; \
	$(DOCKER) build $(DOCKER_BUILD_FLAGS) --build-arg BASE_IMAGE=$(BASE_IMAGE) --build-arg TORCH_SPEC="$(TORCH_SPEC)" \
	  --build-arg TORCH_INDEX="$(TORCH_INDEX)" --build-arg WHEELS_URL="$$wheels_url" --build-arg PIP_CERT_URL="$$cert_url" \
	  --build-arg CUDA_SOURCE=$(CUDA_SOURCE) --build-arg CUDA_WHEELS="$(CUDA_WHEELS)" \
	  -t $(IMAGE) "$(KJ_ROOT)"; \
	$(DOCKER) image ls $(IMAGE)

docker-base: ## a minimal Debian base made here (debootstrap), no registry needed
	@set -e; \
	if $(DOCKER) image inspect $(LOCAL_BASE) > /dev/null 2>&1; then echo "$(LOCAL_BASE) is there"; exit 0; fi; \
	tarball="$(BASE_TARBALL)"; \
	if [ -s "$$tarball" ]; then echo "importing the cached $$tarball"; else \
	  command -v debootstrap > /dev/null || { echo "docker-base needs debootstrap: apt-get install debootstrap" >&2; exit 1; }; \
	  root=$$(mktemp -d); trap 'rm -rf --one-file-system "$$root" "$$root.tar"' EXIT INT TERM; \
	  echo "debootstrap --variant=minbase $(BASE_SUITE) (about 30 s)"; \
	  debootstrap --variant=minbase $(BASE_SUITE) "$$root" $(DEBIAN_MIRROR) > "$$root.log" 2>&1 \
	    || { tail -20 "$$root.log" >&2; rm -f "$$root.log"; exit 1; }; \
	  rm -f "$$root.log"; rm -rf "$$root"/var/cache/apt/archives/*.deb "$$root"/var/lib/apt/lists/*; \
	  if mkdir -p "$(BASE_CACHE)" 2> /dev/null && tar -C "$$root" -cf "$$tarball.part" . 2> /dev/null; then \
	    mv "$$tarball.part" "$$tarball"; echo "cached $$tarball"; \
	  else rm -f "$$tarball.part"; tarball="$$root.tar"; tar -C "$$root" -cf "$$tarball" .; fi; \
	fi; \
	$(DOCKER) import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	  --change 'CMD ["/bin/bash"]' "$$tarball" $(LOCAL_BASE) > /dev/null; \
	echo "$(LOCAL_BASE) imported"

docker-local: docker-base ## the image on that base (CPU track; PyTorch from LOCAL_WHEELS if there)
	@$(MAKE) --no-print-directory -f "$(KJ_ROOT)/docker.mk" docker BASE_IMAGE=$(LOCAL_BASE) IMAGE=$(IMAGE) \
	  TORCH_SPEC="$(LOCAL_TORCH_SPEC)" WHEELS="$(if $(LOCAL_TORCH_WHEEL),$(LOCAL_WHEELS))" TORCH_INDEX=

docker-cuda-local: docker-base ## the CUDA image on that base: nvcc and the CUDA runtime from NVIDIA's wheels on PyPI
	@$(MAKE) --no-print-directory -f "$(KJ_ROOT)/docker.mk" docker BASE_IMAGE=$(LOCAL_BASE) IMAGE=$(CUDA_IMAGE) \
	  CUDA_SOURCE=pypi TORCH_SPEC="$(CUDA_TORCH_SPEC)" TORCH_INDEX=

docker-host-cuda: ## CUDA_IMAGE from this host's g++ and CUDA install (no registry, no network)
	$(PYTHON3) "$(KJ_ROOT)/scripts/host_image.py" --tag $(CUDA_IMAGE)

debs: ## docker.io and every package it depends on, as .debs in DEBS (for make offline-bundle DOCKER_DEBS=1)
	@set -e; command -v apt-get > /dev/null || { echo "make debs needs apt (Debian or Ubuntu)" >&2; exit 1; }; \
	rm -rf "$(DEBS).part"; mkdir -p "$(DEBS).part"; cd "$(DEBS).part"; \
	packages=$$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
	  --no-enhances $(ENGINE_DEBS) | grep '^[a-zA-Z0-9]' | sed 's/:any$$//' | sort -u); \
	apt-get -qq download $$packages 2>&1 | grep -v "^W: Download is performed unsandboxed" || true; \
	ls docker.io_*.deb > /dev/null; cd - > /dev/null; rm -rf "$(DEBS)"; mv "$(DEBS).part" "$(DEBS)"; \
	echo "$(DEBS)/: $$(ls "$(DEBS)"/*.deb | wc -l) .debs, $$(du -sh "$(DEBS)" | cut -f1), from $$(. /etc/os-release; echo $$PRETTY_NAME)"

docker-grade: $(if $(VENV),setup) ## grade FILE with every compile and run in a container of IMAGE
	@test -n "$(FILE)" || { echo "usage: make docker-grade PROBLEM=softmax FILE=path/to/solution.cpp [IMAGE=...]" >&2; exit 2; }
	KERNELJUDGE_IMAGE=$(IMAGE) $(GRADER) $(GRADE_MODE) $(PROBLEM) $(FILE) --sandbox docker

docker-clean: ## remove IMAGE, the local base and its cached tarball
	-$(DOCKER) image rm $(IMAGE) $(LOCAL_BASE)
	rm -f "$(BASE_TARBALL)"
