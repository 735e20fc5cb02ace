"""Import each named module of benign on its own: in a child forked from an interpreter that has
loaded the third-party libraries but no module of benign, so an import that works only when another
module of benign was imported first (a circle) fails here. Prints one line per failure and exits 1
if any failed."""

import importlib
import os
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401  the heavy third-party imports, loaded once before forking
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401
import statsmodels.api  # noqa: E402,F401
import torch  # noqa: E402,F401

assert not any(name == "benign" or name.startswith("benign.") for name in sys.modules)
failed = []
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            os._exit(0)
        except BaseException:
            os.write(write, traceback.format_exc(limit=-3).encode())
            os._exit(1)
    os.close(write)
    with os.fdopen(read) as pipe:
        message = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed.append(name)
        print(f"{name}: {message.strip().splitlines()[-1] if message else status}")
sys.exit(1 if failed else 0)
