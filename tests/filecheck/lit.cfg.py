# lit configuration of xlair's FileCheck tests: `xlair-opt` and `filecheck` from the venv.
#   lowering/<op>.mlir         the op's lowering (xlair-opt -p ... | filecheck)
#   dialect/<op>_invalid.mlir  the op's constraints (xlair-opt --split-input-file --verify-diagnostics)
import os
import sys

import lit.formats

config.name = "xlair"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["Output"]
config.test_source_root = os.path.dirname(__file__)
# lit's scratch files (Output/, .lit_test_times.txt) go to build/, not into the source tree
config.test_exec_root = os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "build", "lit")
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
config.substitutions.append(("xlair-opt", os.path.join(bindir, "xlair-opt")))
config.substitutions.append(("filecheck", os.path.join(bindir, "filecheck")))
# (a PYTHONPATH given to lit reaches xlair-opt: a checkout tried against another's venv)
if os.environ.get("PYTHONPATH"):
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
