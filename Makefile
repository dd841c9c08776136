# All set-up is done here: `make demo` and `make test` work on a fresh Debian 12 + Python 3.11 machine.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# pynumero's compiled ASL interface lives inside the venv, not in $HOME.
export PYOMO_CONFIG_DIR := $(CURDIR)/$(VENV)/pyomo
ASL_INC := /usr/include/ampl-netlib-solvers
ASL_LIB := /usr/lib/x86_64-linux-gnu/libamplsolver.so
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean env

env: $(STAMP)

# Debian's ASL headers are needed to build pynumero's interface for cyipopt.
$(ASL_LIB):
	@if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	 $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libamplsolver-dev cmake g++ >/dev/null

$(STAMP): pyproject.toml $(ASL_LIB)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,ipopt,scip]'
	@if ! ls $(PYOMO_CONFIG_DIR)/lib/libpynumero_ASL* >/dev/null 2>&1; then \
	  echo "building pynumero ASL interface into $(PYOMO_CONFIG_DIR)"; \
	  mkdir -p $(PYOMO_CONFIG_DIR) && \
	  $(PY) -m pyomo.contrib.pynumero.build -DASL_INCLUDE_DIR=$(ASL_INC) -DASL_LIBRARY=$(ASL_LIB) >$(VENV)/pynumero-build.log 2>&1 \
	    || { tail -30 $(VENV)/pynumero-build.log; exit 1; }; \
	fi
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mmprog demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m mmprog.bench inference

clean:
	rm -rf $(VENV) build *.egg-info
