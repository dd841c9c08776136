# All set-up is done here: `make demo` and `make test` work on a fresh Debian 12 + Python 3.11 machine.
# Python packages come from requirements.lock (exact versions and hashes; `make lock` refreshes it),
# Debian packages from APT_PKGS below.
SHELL  := /bin/bash
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
LOCK   := requirements.lock
# pynumero's compiled ASL interface lives inside the venv, not in $HOME.
export PYOMO_CONFIG_DIR := $(CURDIR)/$(VENV)/pyomo
ASL_INC := /usr/include/ampl-netlib-solvers
ASL_LIB := /usr/lib/x86_64-linux-gnu/libamplsolver.so
STAMP  := $(VENV)/.installed
# libamplsolver-dev, cmake, g++: to build pynumero's ASL interface for cyipopt.
# glpk-utils (glpsol), coinor-cbc (cbc): licence-free second LP/MIP solvers for the cross-solver tests.
# chromium: the headless browser of `make docs-check` (typeset maths, loaded plots on the built pages).
APT_PKGS := libamplsolver-dev cmake g++ glpk-utils coinor-cbc chromium
PIP_TOOLS := pip-tools==7.6.2

.PHONY: demo test bench clean env apt lock docs docs-check

env: $(STAMP)

# Checked on every run (cheap), so removing a package is noticed even when .venv is still there.
apt:
	@missing=$$(for p in $(APT_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || printf '%s ' $$p; done); \
	 if [ -n "$$missing" ]; then \
	   if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	   echo "apt-get install $$missing"; \
	   $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	 fi

$(STAMP): pyproject.toml $(LOCK) | apt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --require-hashes --no-deps -r $(LOCK)
	@# an older venv may hold packages the lock no longer lists: remove them, so the venv is exactly the lock
	@extra=$$($(PIP) freeze --exclude-editable | sed 's/[=@ ].*//' | tr 'A-Z_' 'a-z-' \
	   | grep -vxF -f <(grep -E '^[A-Za-z0-9]' $(LOCK) | sed 's/==.*//' | tr 'A-Z_' 'a-z-') || true); \
	 if [ -n "$$extra" ]; then echo "removing packages not in $(LOCK): $$extra"; $(PIP) uninstall -q -y $$extra; fi
	$(PIP) install -q --no-deps --no-build-isolation -e .
	$(PIP) check
	@if ! ls $(PYOMO_CONFIG_DIR)/lib/libpynumero_ASL* >/dev/null 2>&1; then \
	  echo "building pynumero ASL interface into $(PYOMO_CONFIG_DIR)"; \
	  mkdir -p $(PYOMO_CONFIG_DIR) && \
	  $(PY) -m pyomo.contrib.pynumero.build -DASL_INCLUDE_DIR=$(ASL_INC) -DASL_LIBRARY=$(ASL_LIB) >$(VENV)/pynumero-build.log 2>&1 \
	    || { tail -30 $(VENV)/pynumero-build.log; exit 1; }; \
	fi
	touch $(STAMP)

demo: apt $(STAMP)
	$(VENV)/bin/mmprog demo

test: apt $(STAMP)
	$(PY) -m pytest -q

# The docs site, offline (MathJax from the sphinx-mathjax-offline wheel, tutorials executed during the build),
# warnings as errors. Open docs/_build/html/index.html.
DOCS_OUT := docs/_build/html
docs: apt $(STAMP)
	$(PY) -m sphinx -W --keep-going -q -j auto -b html docs $(DOCS_OUT)
	@echo "docs: open $(DOCS_OUT)/index.html"

# Internal links (no network) and a real browser: maths typeset, plots loaded, on a program page, a tutorial and
# the page of `mmprog report`.
REPORT := docs/_build/report
docs-check: docs
	mkdir -p $(REPORT)
	$(VENV)/bin/mmprog train --data tsv:data/tiny_chain.tsv --program mtl --C 1 --out $(REPORT)/mtl --json >/dev/null
	$(VENV)/bin/mmprog report --model $(REPORT)/mtl --data tsv:data/tiny_chain.tsv --out $(REPORT)/mtl.html
	$(PY) docs/check_site.py --all --site $(DOCS_OUT) --page $(REPORT)/mtl.html

bench: apt $(STAMP)
	$(PY) -m mmprog.bench inference

# Refresh the lock to the newest versions pyproject.toml allows. Run `make test` on the result before committing it.
lock:
	rm -rf $(VENV)-lock
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install -q $(PIP_TOOLS)
	$(VENV)-lock/bin/pip-compile --quiet --upgrade --generate-hashes --allow-unsafe --strip-extras --all-build-deps \
	  --extra test,ipopt,scip,bench,docs --no-emit-index-url --no-emit-find-links -o $(LOCK) pyproject.toml
	rm -rf $(VENV)-lock

clean:
	rm -rf $(VENV) $(VENV)-lock build *.egg-info docs/_build docs/_generated docs/_autosummary docs/user_guide/programs docs/tutorials/*.ipynb
