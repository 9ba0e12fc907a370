# kerneljudge: `make grade PROBLEM=softmax` grades something real, `make test` runs the tests.
# Every target installs what it needs first (make setup), reusing an installed PyTorch.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
GRADER := $(VENV)/bin/grader
WHEELHOUSE ?= wheelhouse
PROBLEM ?= softmax
USER ?= $(shell whoami)
# pip finds everything offline when a wheel folder is there (`make wheelhouse` makes one for GPU nodes).
PIP_SOURCE := $(if $(wildcard $(WHEELHOUSE)/*.whl),--no-index --find-links $(WHEELHOUSE))

.PHONY: setup test test-gpu grade selftest wheelhouse clean bench-solutions validate-timing site serve

setup: $(VENV)/.installed

# The venv sees the packages of $(PYTHON) (a .pth file lists its site-packages, which works even when
# $(PYTHON) is itself a venv, as on GPU images), so an installed PyTorch is reused, never downloaded again;
# $(PYTHON)'s pip and setuptools install the project (no build isolation: it works offline).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -c "import site; print('\n'.join(site.getsitepackages()))" \
	  > "$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/kerneljudge-parent.pth"
	$(PYTHON) -m pip --python $(PY) install -q --no-build-isolation $(PIP_SOURCE) -e '.[test,distributed]'
	touch $@

test: setup
	$(PY) -m pytest -q

test-gpu: setup
	$(PY) -m pytest -q -m gpu -p no:cacheprovider

grade: setup
	$(GRADER) submit $(PROBLEM) $(or $(FILE),$$($(PY) -m grader.problems.solutions $(PROBLEM))) --user $(USER)

selftest: setup
	$(GRADER) selftest

# Wheels for an air-gapped GPU node (Python 3.12, x86-64): everything the project needs beyond PyTorch.
wheelhouse:
	$(PYTHON) -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
	  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
	  -d $(WHEELHOUSE) pydantic pydantic-core annotated-types typing-inspection typing-extensions \
	  sqlalchemy greenlet alembic mako markupsafe latex2mathml pyyaml mdit-py-plugins
	$(PYTHON) -m pip wheel -q --no-deps --no-build-isolation -w $(WHEELHOUSE) .

clean:
	rm -rf $(VENV) build site *.egg-info

# GPU: every rung of every ladder next to PyTorch, and the timer checked against do_bench and ncu.
bench-solutions: setup
	$(GRADER) bench-solutions

validate-timing: setup
	$(GRADER) validate-timing

# The static site from the results database, and a local server to browse it.
site: setup
	$(GRADER) render --out build/site

serve: setup
	$(GRADER) serve

include docker.mk
