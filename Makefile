# The companion in two commands:
#   make book   # .venv + install + run every notebook (default profile) + build the site
#   make test   # .venv + install (test deps included) + the whole test suite
#   make check  # the unit tests only (no notebooks, no browser): the development loop, < 2 minutes
# Other targets: make reproduce PROFILE=ci|default|paper [ONLY="name ..."] [PARAMS="-p NAME VALUE"], make html,
# make lab, make kernel,
# make clean.

PYTHON_BOOTSTRAP ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
PIP      := $(PY) -m pip
PROFILE  ?= default
ONLY     ?=
PARAMS   ?=
KERNEL   := gcc-companion
STAMP    := $(VENV)/.installed

.PHONY: book test check reproduce html lab venv install kernel chromium clean distclean help

help:
	@echo "make book                 create $(VENV), install, run all notebooks (profile default), build _build/html"
	@echo "make test                 create $(VENV), install with test deps, run the test suite"
	@echo "make check                the unit tests only (no notebooks, no browser; -m 'not slow')"
	@echo "make reproduce PROFILE=ci run the notebooks in a profile (ci | default | paper); ONLY=\"name ...\""
	@echo "make html                 build the static site from the executed notebooks"
	@echo "make lab                  JupyterLab on the notebooks (text notebooks open as notebooks)"
	@echo "make clean                remove _build and book/generated"

$(PY):
	$(PYTHON_BOOTSTRAP) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Reinstall when the package metadata changes; pip skips what is already satisfied. JupyterLab's
# settings (jupyter/labconfig: .md notebooks open as notebooks) go into the environment.
$(STAMP): pyproject.toml jupyter/labconfig/default_setting_overrides.json | $(PY)
	$(PIP) install -e ".[all]"
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (gcc companion)"
	mkdir -p $(VENV)/etc/jupyter/labconfig
	cp jupyter/labconfig/default_setting_overrides.json $(VENV)/etc/jupyter/labconfig/
	@touch $(STAMP)

venv: $(PY)
install: $(STAMP)
kernel: $(STAMP)
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (gcc companion)"

reproduce: $(STAMP)
	$(PY) -m gcc.reproduce --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),) $(PARAMS)

# As root (a container) JupyterLab refuses to start without --allow-root.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root,) notebooks/

# Pages of notebooks not run yet say so and give their command, so a build after a partial run succeeds.
html: $(STAMP)
	$(PY) -m gcc.reproduce --no-run --build-book
	@echo "Open $(CURDIR)/_build/html/index.html"

# A failing notebook still leaves a site to look at (its page shows the error), but fails the target.
book: $(STAMP) fashion-mnist
	@rc=0; $(PY) -m gcc.reproduce --profile $(PROFILE) --keep-going $(if $(ONLY),--only $(ONLY),) || rc=$$?; \
	$(PY) -m gcc.reproduce --no-run --build-book || exit 1; \
	echo ""; echo "The book is at $(CURDIR)/_build/html/index.html"; \
	if [ $$rc -ne 0 ]; then echo "make book: some notebooks failed (see above)"; fi; exit $$rc

# The browser test needs Debian's chromium; install it when we can (root + apt-get), otherwise
# the test skips itself with a message that says why.
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  echo "chromium: present"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "chromium: installing with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "chromium: could not be installed; the browser test will be skipped"; \
	else \
	  echo "chromium: absent and not installable here (needs root and apt-get); the browser test will be skipped"; \
	fi

# The DNN experiments read Fashion-MNIST from Debian's dataset-fashion-mnist (MNIST's IDX files in
# /usr/share/datasets/fashion-mnist); install it when we can (root + apt-get). Without it the DNN
# notebooks fall back to scikit-learn's digits and every DNN page says so in a warning.
fashion-mnist:
	@if [ -n "$$GCC_FASHION_MNIST" ] || [ -d /usr/share/datasets/fashion-mnist ]; then \
	  echo "fashion-mnist: present"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "fashion-mnist: installing dataset-fashion-mnist with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist >/dev/null) \
	    || echo "fashion-mnist: could not be installed; the DNN pages will run on the fallback digits"; \
	else \
	  echo "fashion-mnist: absent and not installable here (needs root and apt-get); the DNN pages will run on the fallback digits"; \
	fi

test: $(STAMP) chromium fashion-mnist
	$(PY) -m pytest

# The fast tier: tests that need the notebook batch, the book or a browser are marked slow
# (tests/conftest.py marks those using the batch's fixtures) and skipped here.
check: $(STAMP)
	GCC_SKIP_NOTEBOOKS=1 $(PY) -m pytest -m "not slow" -q $(PYTEST_ARGS)

clean:
	rm -rf _build book/generated

distclean: clean
	rm -rf $(VENV)
