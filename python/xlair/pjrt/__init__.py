"""xlair as a JAX device: a PJRT plugin (DESIGN.md rule 11; docs/pjrt.md).

`pip install -e .` registers it with JAX through the `jax_plugins` entry point; then
`jax.devices("xlair")` lists xlair's CPU device and `JAX_PLATFORMS=xlair python prog.py` runs an
unchanged JAX program on xlair.  The plugin is a thin adapter: the `PJRT_Api` table is built
from Python with ctypes (api.py, over the ABI mirror abi.py), and where the set-up built the C
shim (shim.c, loaded by shim.py) JAX gets the shim's copy of it, which answers the hot
fixed-answer calls in C; the engine (engine.py) hands each program JAX compiles to xlair's
importer and compile cache, and keeps buffers as `xla.Array`s.
"""
from __future__ import annotations

PLATFORM = "xlair"

#: below XLA:CPU's (0): installed, the plugin is a device JAX lists, never the default one
#: unless asked for (JAX_PLATFORMS=xlair, jax.devices("xlair"), jax.default_device)
PRIORITY = -100


def capsule():
    """The `pjrt_c_api` PyCapsule of the plugin's PJRT_Api."""
    from .api import capsule as make
    return make()


def table() -> str:
    """Which PJRT_Api table the plugin hands JAX (made on first use): "shim" (the C shim's,
    `libxlair_pjrt_shim.so` built by `make`) or "ctypes" (the Python-built table alone: the
    library is not built or not loadable, or XLAIR_PJRT_SHIM=0; `xlair.pjrt.shim.REASON` says
    which)."""
    from . import api
    api.table()
    return api.table_kind()


def initialize() -> None:
    """The `jax_plugins` entry point: register the plugin with JAX under the name `xlair`."""
    from jax._src import xla_bridge
    from .lowerings import register
    xla_bridge.register_plugin(PLATFORM, priority=PRIORITY, c_api=capsule())
    register(PLATFORM)
