"""xlair as a JAX device: a PJRT plugin (DESIGN.md rule 11; docs/pjrt.md).

`pip install -e .` registers it with JAX through the `jax_plugins` entry point; then
`jax.devices("xlair")` lists xlair's CPU device and `JAX_PLATFORMS=xlair python prog.py` runs an
unchanged JAX program on xlair; each GPU target the machine has a driver for is a further
platform, `xlair_vulkan` / `xlair_cuda` / `xlair_rocm` (docs/pjrt.md).  The plugin is a thin adapter: the `PJRT_Api` table is built
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


def capsule(python: bool = False):
    """The `pjrt_c_api` PyCapsule of the plugin's PJRT_Api (`python`: the Python-built table's,
    without the C shim)."""
    from .api import capsule as make
    return make(python)


def table() -> str:
    """Which PJRT_Api table the plugin hands JAX (made on first use): "shim" (the C shim's,
    `libxlair_pjrt_shim.so` built by `make`) or "ctypes" (the Python-built table alone: the
    library is not built or not loadable, or XLAIR_PJRT_SHIM=0; `xlair.pjrt.shim.REASON` says
    which)."""
    from . import api
    api.table()
    return api.table_kind()


def gpu_platforms() -> list[str]:
    """The GPU targets whose platforms `initialize` registers: $XLAIR_PJRT_TARGETS where set
    (a comma-separated list of vulkan, cuda, rocm; empty: none), else those whose driver is
    installed, by a look at files that costs no driver load: a Vulkan ICD manifest
    (vulkan; the loader's search folders or $VK_ICD_FILENAMES / $VK_DRIVER_FILES), NVIDIA's
    kernel driver (cuda), AMD's (/dev/kfd: rocm).  The device itself is probed when JAX
    creates the platform's client."""
    import os
    from .engine import GPU_TARGETS
    chosen = os.environ.get("XLAIR_PJRT_TARGETS")
    if chosen is not None:
        return [t for t in (x.strip() for x in chosen.split(",")) if t in GPU_TARGETS]
    icd = any(os.environ.get(v) for v in ("VK_ICD_FILENAMES", "VK_DRIVER_FILES")) or any(
        os.path.isdir(d) and any(f.endswith(".json") for f in os.listdir(d))
        for d in ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"))
    present = {"vulkan": icd, "cuda": os.path.exists("/proc/driver/nvidia/version"),
               "rocm": os.path.exists("/dev/kfd")}
    return [t for t in GPU_TARGETS if present[t]]


def initialize() -> None:
    """The `jax_plugins` entry point: register the plugin with JAX under the name `xlair` (the
    CPU), and each GPU target the machine has a driver for under `xlair_<target>` (priority
    one below; failing quietly when JAX starts every platform and that one finds no device,
    loudly when JAX_PLATFORMS names it)."""
    from jax._src import xla_bridge
    from .engine import platform_of
    from .lowerings import GPU_CPU_RULES, register
    xla_bridge.register_plugin(PLATFORM, priority=PRIORITY, c_api=capsule())
    register(PLATFORM)
    for target in gpu_platforms():
        name = platform_of(target)
        xla_bridge.register_plugin(name, priority=PRIORITY - 1, options={"target": target},
                                   c_api=capsule(python=True))
        xla_bridge._backend_factories[name].fail_quietly = True
        register(name, also=GPU_CPU_RULES)
