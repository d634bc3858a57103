"""JAX's lowerings for the platform `xlair`: a primitive with no common lowering rule, only
CPU- (and GPU-) specific ones (the linear algebra JAX lowers to LAPACK custom calls: eigh, eig,
svd, ...), gets XLA:CPU's rule under `xlair` too.  xlair's importer takes those custom calls
(python/xlair/lapack.py runs them).  Primitives with a common rule keep it: JAX uses the
common rule on a platform that has no rule of its own.
"""
from __future__ import annotations


#: primitives whose common rule a GPU platform does not take: XLA:CPU's rule instead (a LAPACK
#: custom call, which xlair runs as device code where it has a device form and refuses with a
#: TargetLimitation where it has none).  `lu`: JAX's common rule (a Python loop of lax ops)
#: gave wrong pivots for complex matrices on Vulkan (lavapipe; docs/iree-limits.md), where
#: xlair's getrf device code is right, complex matrices' included
GPU_CPU_RULES = ("lu",)


def register(platform: str, also: tuple = ()) -> list[str]:
    """Give `platform` XLA:CPU's rule of every primitive that has no common rule and no rule
    of the platform's own, and of those named in `also` (GPU_CPU_RULES); the names of the
    primitives given one."""
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg  # noqa: F401  (its CPU rules registered)
    cpu = mlir._platform_specific_lowerings.get("cpu", {})
    mine = mlir._platform_specific_lowerings[platform]
    given = []
    for prim, entry in list(cpu.items()):
        if (prim in mlir._lowerings and prim.name not in also) or prim in mine:
            continue
        mlir.register_lowering(prim, entry.rule, platform=platform, inline=entry.inline)
        given.append(prim.name)
    return sorted(given)
