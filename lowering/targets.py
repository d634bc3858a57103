"""What the lowering knows of each target: one description per target (docs/architecture.md,
"Targets").

The passes get the target as their option (`xla-to-linalg{target=cuda}`) and its patterns ask
its description (`registry.options().desc`) what to do; no pattern compares target names.  A
description holds the target's limits (the buffers a dispatch binds), its loop policy (which
loops run on the device), its precision policy, the IREE workarounds it needs, each a named
flag, and its cost thresholds.  A change for one target is a change of its line here; a new
form the lowering chooses by target is a new field, documented where it is declared.

python/xlair/targets.py (IREE's flags and runtime drivers per target) reads the shared facts
from here: the binding limit (xlair.compile checks every artifact against it) and the data
tiling threshold.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TargetDescription:
    """One target as the lowering sees it.  `name` is None for the lowering for no target in
    particular (xlair-opt without `target=`): the portable forms, with the CPU's numerics."""
    name: str | None

    # --- limits ---------------------------------------------------------------------------
    #: buffers one dispatch may bind (its reads and its results).  IREE 3.13 fuses past it;
    #: the module is then refused when loaded, not when compiled (docs/iree-limits.md)
    max_bindings: int
    #: tensors an element-wise tree may read (lowering/bindings.py), leaving room within
    #: max_bindings for the results IREE fuses into the same dispatch
    max_reads: int

    # --- loops ----------------------------------------------------------------------------
    #: loops run on the device (None: on the host, a read back of the condition a trip), in one
    #: of two forms (lowering/device_loops.py): "dispatch", a small loop or program body as one
    #: dispatch region of scalar loops, and element-wise While loops per element
    #: (lowering/loops.py): IREE's CPU codegen runs such a region on one core, vectorized by
    #: LLVM; "thread", a small loop as the body of a linalg.generic each of whose points runs
    #: the whole loop and keeps its share of the results: IREE's GPU codegen gives a dispatch
    #: without a linalg op no pipeline (CUDA crashed in ConvertToNVVMPass, Vulkan left its
    #: bindings unconverted: docs/iree-limits.md), and distributes a generic over threads.
    #: Vulkan keeps its loops on the host: the "thread" form compiled, but IREE's SPIR-V code
    #: for it gave wrong results on lavapipe (docs/iree-limits.md)
    device_loops: str | None = None
    #: trips a While left on the host runs between two reads of its condition (0: one read a
    #: trip).  The host drives a counted chunk of trips, each trip's state kept as it was
    #: once the condition fails on the device (lowering/control_flow.py chunk_host_loops): a
    #: read back costs 0.5-1.5 ms on CUDA, a trip's launch tens of microseconds, and a loop
    #: runs at most this many trips less one too many.  Vulkan reads every trip: the form lost
    #: lavapipe's device in half the runs of tolerance_loops (docs/iree-limits.md)
    loop_chunk: int = 0

    # --- precision ------------------------------------------------------------------------
    #: F16/BF16/F32 functions (sin, pow, tanh, ...), C64 functions and F32/C64 FFTs computed
    #: in F64 and rounded once, F32 exp and tanh by xlair's own (within 1 ULP)
    #: (lowering/elementwise.py, lowering/linalg_ops.py).  GPUs compute in the type: they may
    #: lack F64, and have it to spare least
    wide_math: bool = False
    #: F16/BF16/F32 sin, cos and tan computed by xlair in F32, the argument reduced to
    #: [-pi/4, pi/4] (lowering/libm.py reduce_trig_arguments): Vulkan's need only be accurate
    #: on [-pi, pi] (lavapipe's sin(5e8) was 8.1e8).  CUDA's and ROCm's device libraries reduce
    #: their arguments themselves
    reduce_trig: bool = False
    #: F16/BF16 products summed in F32 and rounded once (XLA's numerics; IREE's CUDA and ROCm
    #: matmul codegen also fails on a BF16 accumulator).  Vulkan sums in the operands' type
    f32_accumulation: bool = True
    #: how an F32 matrix product or convolution (groups 1) is computed where its precision
    #: config does not ask HIGHEST:
    #: "f32", or "bf16x3", as three BF16 products summed in F32 (hi*hi + hi*lo + lo*hi, each
    #: operand split into a BF16 part and the BF16 rest: lowering/contraction.py), which GPUs'
    #: tensor cores run: a relative error near 1e-5, against 3e-4 for XLA:GPU's default (TF32)
    #: and 2e-6 in F32.  Measured on an H200 (issue 39), f32 4096^3: 35.1 ms in F32, 3.60 ms
    #: as three BF16 products, XLA:GPU 0.52 ms (TF32) and 2.98 ms (HIGHEST)
    f32_products: str = "f32"

    # --- forms for IREE -------------------------------------------------------------------
    #: xlair's hand-written CPU forms: tile sizes (lowering/contraction.py, reduction.py), the
    #: Sort kernel (lowering/sort.py), iree_linalg_ext.gather, the tiled SelectAndScatter, and
    #: the products kept out of a forking chain (contraction.mark_own_products) or of a
    #: shared transpose's producer for IREE's CPU data tiling
    cpu_kernels: bool = False
    #: a convolution the CPU computes as one matmul of patches where that pays
    #: (contraction._patches_pay)
    conv_patches: bool = False
    #: DynamicSlice / DynamicUpdateSlice starts computed where IREE puts them (the host) and
    #: the slice taken with dynamic offsets; otherwise each element computes them in the
    #: kernel (lavapipe returned an earlier call's slice: docs/iree-limits.md)
    host_slice_offsets: bool = False

    #: JAX's linear-algebra custom calls (LAPACK) run by LAPACK on the host (python/xlair/lapack.py),
    #: but for the small ones that cpu_kernels targets expand (lowering/cost.py LINALG_DEVICE_MAX);
    #: without it, every call xla-expand-linalg covers becomes device code (lowering/linalg_expand.py)
    host_linalg: bool = False

    # --- IREE workarounds (docs/iree-limits.md) -------------------------------------------
    #: which reductions read a computed operand from a dispatch of its own: "" none; "unsafe"
    #: the sums whose fused producer IREE's CUDA / ROCm code generation fails on ("failed to get
    #: neutral element for reduction", "failed to distribute": lowering/reduction.py
    #: _breaks_fused_sum); "all" every one, the form before (bench/bench_gpu.py FORMS measures
    #: what the narrower one saves)
    reduction_barriers: str = ""
    #: complex results made from planar parts after a reduction go through a barrier (LLVMGPU
    #: thread tiling reads complex<f32>'s bit width and crashes)
    complex_join_barrier: bool = False
    #: a complex Reduce of additions as the sums of the real and imaginary parts (IREE 3.13's
    #: GPU code for a complex sum fused with its consumer crashed: its complex accumulator in
    #: workgroup memory, reduction._planar_sum)
    complex_sums_planar: bool = False
    #: a convolution operand converted to the summing type stays a dispatch of its own (SPIR-V
    #: folds the conversion into the convolution and gets it wrong)
    conv_convert_dispatch: bool = False
    #: a matmul with BF16 operands or result computed in F32, each converted operand and the
    #: F32 product a dispatch of their own (IREE 3.13's SPIR-V code reads and writes a matmul's
    #: BF16 buffers through a vector.bitcast it cannot lower: "failed to legalize operation
    #: 'vector.bitcast'").  The sums in F32 and one rounding are XLA's numerics too
    bf16_matmul_widened: bool = False
    #: a matrix product with nothing to sum (K = 1: a broadcast product, lowering/contraction.py)
    #: reads its operands from dispatches of their own (IREE's SPIR-V code for a reduction fused
    #: into it gave wrong products: half of moe_top2_grad's output, its einsum "te,td->etd" of
    #: a one-hot sum, on lavapipe)
    broadcast_product_barriers: bool = False
    #: a grouped 3-D depthwise convolution with a feature multiplier as the generic form (IREE
    #: 3.13's SPIR-V code for depthwise_conv_3d_ndhwc_dhwcm left half the outputs zero)
    depthwise_3d_generic: bool = False
    #: Scatter indexes dimensions whose window is narrower than the operand instead of cutting
    #: them (SPIR-V crashed on a 64-bit scatter into a cut-out window)
    scatter_indexed_windows: bool = False
    #: a channels-last convolution's output features padded up to a multiple of this (ROCm's
    #: implicit GEMM crashed in LLVM on feature counts not a multiple of 16); 1: none
    conv_feature_multiple: int = 1
    #: a batched matrix product with fewer than 16 rows (M) not a multiple of this gets zero
    #: rows up to one (0: none).  ROCm 4: LLVM's AMDGPU backend crashed (segfault in
    #: ValueHandleBase::AddToUseList) on IREE 3.13's code for batch_matmul of 2x6x8x8 and
    #: 2x10x10x10, in F32 and BF16, so F32 eigh and SVD of 5x5, 6x6 and 10x10 matrices (Jacobi's
    #: rotations) failed to compile; padded to 8 and 12 rows they compile (docs/iree-limits.md)
    batch_m_multiple: int = 0
    #: a Scatter of complex elements as one linalg.generic over the operand (indexing.py
    #: _dense_scatter), not iree_linalg_ext.scatter: IREE 3.13's LLVMGPU lowering config of a
    #: complex scatter crashed (getIntOrFloatBitWidth in setScatterLoweringConfig), so every
    #: complex `x.at[i].set(v)` failed to compile for CUDA and ROCm
    complex_scatter_dense: bool = False
    #: a broadcast of a complex constant scalar as a planar fill of opaque parts
    #: (registry.complex_fill): broadcast, IREE 3.13 ran its operand-less dispatch again for each
    #: array a peeled trip updates in place and CSE merged the runs into one buffer (a scan's
    #: complex outputs mixed on the CPU, docs/iree-limits.md).  Measured on the CPU; on Vulkan
    #: the fill made IREE's VM read a null buffer in every form of complex det's loops
    #: (iree-org/iree#24753), so the GPU targets keep the broadcast until a GPU measures it
    complex_constant_fills: bool = False

    # --- cost thresholds ------------------------------------------------------------------
    #: IREE's data tiling only for programs with a contraction of at least this many
    #: multiply-adds (None: the target's flags do not data-tile); see CPU below
    data_tiling_work: int | None = None
    #: the workgroup tile of a BF16 / F16 matmul on NVIDIA's tensor cores (mma.sync), handed
    #: to IREE as the op's compilation_info (lowering/contraction.py _set_mma_tiles): (rows,
    #: columns, K, threads, prefetch stages).  None: IREE's own choice, which on sm_80 is 128x64
    #: rows by columns and 32 of K, 128 threads, 2 stages, for every size (4096^3 BF16 on the
    #: H200: 1.12 ms against XLA:GPU's 0.35).  Other tiles are measured against it by `make
    #: bench-gpu` (bench/bench_gpu.py FORMS) before one is the default
    mma_tiles: tuple | None = None
    #: (threads a workgroup, elements a thread) of a GPU's element-wise dispatches: the 1-D
    #: all-parallel generics of at least a workgroup's elements whose body is element-wise
    #: (python/xlair/targets.py elementwise_spec, a transform-dialect library IREE applies to
    #: each dispatch after fusion).  None: IREE's own choice, on CUDA one 32-thread subgroup of
    #: 4 elements (IREE 3.13's setTileAndFuseLoweringConfig; tanh(x)*y+exp(-x*x) on 64M F32 on
    #: the H200: 0.94 ms against XLA:GPU's 0.31).  `make bench-gpu` measures 256x4 and 256x8
    #: against it (bench/bench_gpu.py FORMS) before one is the default.  The lowering does not
    #: read it; it is an IREE flag of the target (Target.compile_flags)
    elementwise_threads: tuple | None = None


#: Data tiling (IREE packs a contraction's operands into tiles for its micro-kernels) only for
#: programs with a contraction of at least this many multiply-adds (lowering/cost.py op_work;
#: xlair.compile's program_flags turns it off below, lowering/contraction.py tiles smaller
#: matmuls itself).  Below, the packing dispatches cost more than they save, and each is code to
#: compile: measured (bench/NOTES.md section 16, Xeon), untiled 64x784x256 matmul 0.77x the tiled
#: time, batched 8x128^3 0.55x, the real programs with small matmuls 0.8-0.9x, their cold
#: compiles 10-40% shorter; a 1024^3 matmul is 2.9x slower untiled.  On an AMD Zen 4 (section
#: 19), best of 9 rounds untiled/tiled: 256x784x512 0.91, 784x256x512 0.78, 512^3 0.98,
#: 256x2048x512 1.01, 512x1024x1024 1.46, 1024^3 1.40; the MLP step of `make bench` (256x784x512
#: and its transposed forms) 2.42-2.5 ms against 2.87-2.94 tiled (XLA:CPU 2.58-2.69).
_CPU_DATA_TILING_WORK = 1 << 27

#: IREE's CPU HAL runs a dispatch with at most 32 bindings ("binding count 35 > 32; while
#: invoking native function hal.command_buffer.dispatch")
CPU = TargetDescription("cpu", max_bindings=32, max_reads=24, device_loops="dispatch", wide_math=True,
                        cpu_kernels=True, conv_patches=True, host_slice_offsets=True, host_linalg=True,
                        data_tiling_work=_CPU_DATA_TILING_WORK, complex_constant_fills=True)
#: no target in particular: the CPU's limits and numerics, none of its own kernels or loops
PORTABLE = TargetDescription(None, max_bindings=32, max_reads=24, wide_math=True, conv_patches=True,
                             host_slice_offsets=True, host_linalg=True, complex_constant_fills=True)
#: IREE's CUDA HAL: IREE_HAL_CUDA_MAX_DISPATCH_BINDING_COUNT = 16 (native_executable.c checks
#: each export's binding count when the module is loaded)
CUDA = TargetDescription("cuda", max_bindings=16, max_reads=12, device_loops="thread", loop_chunk=16,
                         f32_products="bf16x3",
                         reduction_barriers="unsafe",
                         complex_join_barrier=True, complex_sums_planar=True, conv_convert_dispatch=True,
                         depthwise_3d_generic=True,
                         scatter_indexed_windows=True, complex_scatter_dense=True)
#: IREE's HIP HAL: IREE_HAL_HIP_MAX_DISPATCH_BINDING_COUNT = 16, checked the same way
#: (every reduction of a computed operand cut: with only CUDA's "unsafe" ones, IREE's ROCm code
#: failed on more fused sums, "'func.func' op failed to distribute" on a 64-element sum of
#: log(x) + y - z in mlp_adam_step and gpt_adamw_step)
ROCM = dataclasses.replace(CUDA, name="rocm", conv_feature_multiple=16, batch_m_multiple=4, mma_tiles=None,
                           reduction_barriers="all")
#: IREE's Vulkan HAL checks a pipeline's storage buffers against the device's
#: maxPerStageDescriptorStorageBuffers when it loads the module: no number of IREE's own, and
#: xlair's "generic" target names no device.  16, the most restrictive of IREE's GPU HALs
#: (CUDA, HIP): desktop drivers allow far more, Vulkan's own minimum is 4
VULKAN = TargetDescription("vulkan", max_bindings=16, max_reads=12, f32_accumulation=False,
                           conv_convert_dispatch=True, bf16_matmul_widened=True, broadcast_product_barriers=True,
                           depthwise_3d_generic=True, scatter_indexed_windows=True, complex_sums_planar=True,
                           reduce_trig=True)

DESCRIPTIONS = {d.name: d for d in (CPU, VULKAN, CUDA, ROCM)}


def describe(name: str | None) -> TargetDescription:
    """The description of a target named as the pass option `target` names it (None: none)."""
    return PORTABLE if name is None else DESCRIPTIONS[name]
