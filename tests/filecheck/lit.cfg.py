# lit configuration of xlair's FileCheck tests: `xlair-opt` and `filecheck` from the venv.
import os
import sys

import lit.formats

config.name = "xlair"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
config.substitutions.append(("xlair-opt", os.path.join(bindir, "xlair-opt")))
config.substitutions.append(("filecheck", os.path.join(bindir, "filecheck")))
