"""Forms of the lowering IREE rejected in real programs, each test named after IREE's error and
built as the program that met it: compiled and checked against numpy."""
import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.compile import alignment_of, compile_vmfb, lower, needs_of, program_flags
from xlair.targets import target as xla_target
from xlair.dialect.types import F32, S32, Shape
from xlair_testing import comp_of, iree_compiled


def test_exceeded_stack_allocation_limit_transposed_matmul(target):
    """An optax Adam step on a Dense layer's weight gradient: JAX's gradient is a dot_general
    (g^T x, [256, 784]) and a transpose to the kernel's [784, 256]; the moments and the update
    read it element-wise.  Lowered as it stood, IREE fused the transpose and the update into the
    matmul's dispatch and failed on the CPU: "'func.func' op exceeded stack allocation limit of
    32768 bytes for function. Got 231424 bytes"."""
    b = xla.Builder("adam_weight_grad")
    g = b.parameter(0, Shape(F32, [64, 256]))
    x = b.parameter(1, Shape(F32, [64, 784]))
    w, m, v = (b.parameter(i, Shape(F32, [784, 256])) for i in (2, 3, 4))
    prod = O.dot_general(g, x, xla.DotDimensionNumbers((0,), (0,)))
    grad = O.transpose(prod, [1, 0])

    def c(val):
        return O.broadcast(O.constant(b, np.float32(val)), [784, 256])
    m2 = c(0.9) * m + c(0.1) * grad
    v2 = c(0.999) * v + c(0.001) * grad * grad
    w2 = w - c(1e-3) * m2 / (O.sqrt(v2) + c(1e-8))
    O.tuple(b, [w2, m2, v2])
    exe = xla.compile(b.build(), target=target)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ([64, 256], [64, 784], [784, 256], [784, 256])]
    args.append(rng.uniform(0, 1, (784, 256)).astype(np.float32))
    got = exe(*args)
    gn, xn, wn, mn, vn = (a.astype(np.float64) for a in args)
    gr = (gn.T @ xn).T
    m_ref = 0.9 * mn + 0.1 * gr
    v_ref = 0.999 * vn + 0.001 * gr * gr
    w_ref = wn - 1e-3 * m_ref / (np.sqrt(v_ref) + 1e-8)
    for out, ref in zip(got, (w_ref, m_ref, v_ref)):
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_llvm_translation_failed_unrealized_conversion_cast_strided_slice_rev(target):
    """JAX's x[::-2, ::2] is a strided Slice then a Rev.  A strided tensor.extract_slice read by
    Rev's element gather left IREE a strided memref it could not lower: "LLVM Translation failed
    for operation: builtin.unrealized_conversion_cast"."""
    b = xla.Builder("strided_rev")
    p = b.parameter(0, Shape(F32, [10, 4]))
    O.tuple(b, [O.rev(O.slice(p, [1, 0], [10, 4], [2, 2]), [0]), O.rev(O.slice(p, [0, 1], [9, 4], [3, 1]), [0, 1])])
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    got = xla.compile(b.build(), target=target)(x)
    np.testing.assert_array_equal(got[0], x[1:10:2, 0:4:2][::-1])
    np.testing.assert_array_equal(got[1], x[0:9:3, 1:4][::-1, ::-1])


def _encoder_grad_vs_jax(batch, seq, dim, heads, target):
    """The gradient of a flax transformer encoder layer (SelfAttention, LayerNorm, Dense, gelu)
    through xlair.jit against jax.jit."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = x + nn.SelfAttention(num_heads=heads, qkv_features=dim)(nn.LayerNorm()(x))
            return x + nn.Dense(dim)(nn.gelu(nn.Dense(4 * dim)(nn.LayerNorm()(x))))
    m = Encoder()
    x = np.random.default_rng(0).standard_normal((batch, seq, dim)).astype(np.float32)
    params = jax.tree_util.tree_map(np.asarray, m.init(jax.random.key(0), x))
    grad = jax.grad(lambda p, x: jnp.mean(m.apply(p, x) ** 2))
    got = jax.tree_util.tree_leaves(xla.jit(grad, target=target)(params, x))
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(grad)(params, x))]
    top = max(np.abs(w).max() for w in want)
    for g, w in zip(got, want):      # atol: some of these gradients are zero up to rounding
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5 * max(np.abs(w).max(), 0.01 * top))


def test_exceeded_stack_allocation_limit_dense_gelu_grad(target):
    """Dense 128->512 then gelu, under jax.grad: the product plus bias is read by gelu and by
    gelu's derivative, so the element-wise chain after the matmul forks; IREE fused it into the
    matmul's dispatch as a 4-result op and failed: "'func.func' op exceeded stack allocation
    limit of 32768 bytes for function. Got 100352 bytes"."""
    _encoder_grad_vs_jax(4, 32, 128, 4, target)


def test_large_vector_sizes_attention_probs_grad(target):
    """8 heads of 64x64 attention, under jax.grad: the probabilities are read by p @ v and,
    transposed, by the gradient of v; IREE fused the transpose and the data tiling's
    set_encoding into the softmax division's dispatch and failed: "One or more operations with
    large vector sizes (32768 bytes) were found"."""
    _encoder_grad_vs_jax(8, 64, 64, 8, target)


# -- GPU targets: compiled here (not run), the numbers checked on this machine's targets --------
GPUS = ("cuda", "rocm")


def _bf16_matmul():
    from xlair.dialect.types import BF16
    b = xla.Builder("bf16_matmul")
    O.dot(b.parameter(0, Shape(BF16, [32, 64])), b.parameter(1, Shape(BF16, [64, 16])))
    return b.build()


@pytest.mark.parametrize("gpu", GPUS)
def test_failed_to_distribute_bf16_matmul(gpu):
    """A BF16 matmul (jnp.dot of bf16 arrays) accumulated in BF16: IREE's CUDA and ROCm codegen
    failed with "'func.func' op failed to distribute".  F16/BF16 products are now summed in F32
    and rounded once, as XLA does."""
    assert compile_vmfb(_bf16_matmul(), gpu)


def test_bf16_matmul_sums_in_f32(target):
    """The same product on this machine's targets equals the F32 sum rounded once to BF16 (up to
    the order of the sum: one BF16 ulp); a BF16 accumulator loses most of it."""
    import ml_dtypes
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 64)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    got = xla.compile(_bf16_matmul(), target=target)(a, w).astype(np.float64)
    want = (a.astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2 ** -8, atol=1e-6)


def _sum_of(fn_name: str):
    b = xla.Builder(f"sum_of_{fn_name}")
    x = b.parameter(0, Shape(F32, [32, 64]))
    if fn_name == "neg":
        y = O.neg(x)
    else:
        y = x * O.broadcast(O.constant(b, np.float32(2.0)), [32, 64])
    add = xla.Builder("add")
    O.add(add.parameter(0, Shape(F32, [])), add.parameter(1, Shape(F32, [])))
    O.reduce(y, O.constant(b, np.float32(0)), add.build(), [1])
    return b.build()


@pytest.mark.parametrize("gpu", GPUS)
def test_failed_to_get_neutral_element_for_reduction_neg_sum(gpu):
    """The sum of a negation (LayerNorm's and softmax's gradients): IREE fused the negation into
    the reduction, made addf(acc, negf(x)) a subf, and its CUDA / ROCm codegen failed: "failed to
    get neutral element for reduction".  The reduction now reads a computed operand from a
    dispatch of its own on these targets."""
    assert compile_vmfb(_sum_of("neg"), gpu)


@pytest.mark.parametrize("gpu", GPUS)
def test_failed_to_distribute_scaled_sum(gpu):
    """The sum of x * 2 (a mean's gradient): IREE's CUDA / ROCm codegen of the fused reduction
    failed with "'func.func' op failed to distribute"."""
    assert compile_vmfb(_sum_of("scaled"), gpu)


def _fft_of_length(n: int):
    from xlair.dialect.attrs import FftType
    from xlair.dialect.types import C64
    b = xla.Builder(f"fft_{n}")
    O.fft(b.parameter(0, Shape(C64, [4, n])), FftType.FFT, [n])
    return b.build()


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("n", [8, 59])
def test_derive_linalg_op_thread_tile_sizes_segfault_complex_fft(gpu, n):
    """A complex FFT whose last stage is a reduction of 8 (radix 8) or 59 (a direct DFT):
    iree-compile segfaulted in deriveLinalgOpThreadTileSizes, which asks a complex<f32> result
    for its integer-or-float bit width when the complex join is fused after the reduction.
    The planar halves now reach the join through an optimization barrier on CUDA and ROCm."""
    assert compile_vmfb(_fft_of_length(n), gpu)


@pytest.mark.parametrize("n", [8, 59])
def test_complex_fft_lengths_8_and_59(target, n):
    x = np.random.default_rng(n).standard_normal((4, n, 2)).astype(np.float32)
    x = (x[..., 0] + 1j * x[..., 1]).astype(np.complex64)
    got = xla.compile(_fft_of_length(n), target=target)(x)
    np.testing.assert_allclose(got, np.fft.fft(x.astype(np.complex128)), rtol=1e-4, atol=1e-4 * n)


def _conv_nhwc(n: int, hw: int, c: int, f: int, precision=None):
    """A 3x3 VALID convolution as flax writes it: NHWC input, HWIO kernel.  At DEFAULT precision
    ROCm computes it as three BF16 convolutions (f32_products), at HIGHEST in F32."""
    b = xla.Builder(f"conv_{n}x{hw}x{hw}x{c}_{f}")
    x = b.parameter(0, Shape(F32, [n, hw, hw, c]))
    w = b.parameter(1, Shape(F32, [3, 3, c, f]))
    O.conv_general_dilated(x, w, [1, 1], "VALID", [1, 1], [1, 1],
                           xla.ConvolutionDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2)),
                           precision_config=precision)
    return b.build()


def test_amdgpu_lower_buffer_fat_pointers_crash_conv_8_features():
    """The ResNet block's 3x3 convolution of 8 features over 4x12x12x8: on ROCm, LLVM's
    AMDGPULowerBufferFatPointers crashed iree-compile (a deep recursion) in IREE's implicit
    GEMM, which pads 8 features to its 16-wide MFMA tile.  On ROCm the lowering now computes
    the features up to a multiple of 16 with zero weights and cuts the result back."""
    assert compile_vmfb(_conv_nhwc(4, 12, 8, 8), "rocm")
    assert compile_vmfb(_conv_nhwc(4, 12, 8, 8, "HIGHEST"), "rocm")


@pytest.mark.parametrize("f", [6, 8, 24])
@pytest.mark.parametrize("precision", [None, "HIGHEST"])
def test_rocm_form_of_a_convolution_with_padded_features(f, precision):
    """The ROCm form (features padded to 16 and cut back), compiled for the CPU and run there
    (ROCm itself is compiled, not run here), against a numpy convolution: in F32 at HIGHEST,
    as three BF16 convolutions (a relative error near 1e-5) at DEFAULT."""
    from xlair.compile import lower
    from xlair.targets import target as find_target
    comp = _conv_nhwc(4, 12, 8, f, precision)
    cpu = find_target("cpu")
    vmfb = iree_compiled(str(lower(comp, 1, "rocm")), cpu, cpu.compile_flags(None))
    rng = np.random.default_rng(f)
    x = rng.standard_normal((4, 12, 12, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, f)).astype(np.float32)
    got = xla.Executable(vmfb, "cpu")(x, w)
    patches = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(1, 2))
    want = np.einsum("nhwcij,ijcf->nhwf", patches, w.astype(np.float64))
    assert got.shape == (4, 10, 10, f)
    tol = 1e-4 if precision else 1e-3
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("fn_name", ["neg", "scaled"])
def test_sums_of_computed_operands(target, fn_name):
    x = np.random.default_rng(4).standard_normal((32, 64)).astype(np.float32)
    got = xla.compile(_sum_of(fn_name), target=target)(x)
    want = (-x if fn_name == "neg" else 2 * x).astype(np.float64).sum(1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_materialize_device_encoding_crash_transposed_matmul_plus_iota(target):
    """jax.scipy.linalg.cho_factor(a @ a.T + n * eye): JAX transposes the sum (its lower
    Cholesky factor is computed as an upper one), and the eye is built from two iotas.  Lowered
    as it stood, IREE fused the transpose, the matmul and the iota-built addend into one
    dispatch and crashed in MaterializeDeviceEncodingPass with data tiling on (a segfault in
    iree-compile).  xla-simplify now moves the transpose onto the sum's operands, where it
    folds into the product."""
    n = 5
    b = xla.Builder("cho_factor_spd")
    a = b.parameter(0, Shape(F32, [n, n]))
    s32 = Shape(xla.S32, [n, n])
    eye = O.convert_element_type(O.eq(O.iota(b, s32, 0), O.iota(b, s32, 1)), F32)
    spd = O.add(O.dot(a, O.transpose(a, [1, 0])), O.mul(O.broadcast(O.constant(b, np.float32(n)), [n, n]), eye))
    O.transpose(spd, [1, 0])
    exe = xla.compile(b.build(), target=target)
    x = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    np.testing.assert_allclose(exe(x), (x @ x.T + n * np.eye(n)).T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("read", [False, True])
def test_maximum_iteration_count_exceeded_in_fixed_point_pipeline_unread_while(target, read):
    """JAX's LU pivots-to-permutation loop on a batch (a While whose body gathers and scatters
    rows of an s32[3,4]), as in jax.scipy.linalg.lu_factor, jnp.linalg.det and slogdet of an
    f32[3,4,4], which drop the permutation.  Here nothing reads the permutation either (it
    feeds only an empty slice).  Lowered as it stood, canonicalization left an scf.if with no
    results around the scf.while, whose body holds the gather's util.optimization_barrier;
    IREE's stream pipeline failed on it: "maximum iteration count exceeded in fixed point
    pipeline".  An unread result of a While now keeps a util.optimization_barrier after the
    scf.if, so the scf.if keeps it.  `read`: the same loop with its result returned (no
    barrier kept)."""
    import jax
    from jax import lax

    def f(piv, x):
        perm = lax.linalg.lu_pivots_to_permutation(piv, 4)
        return x * 2, (perm if read else perm[:, :0])
    piv = np.array([[3, 2, 2, 3], [1, 1, 3, 3], [0, 2, 2, 3]], np.int32)
    x = np.arange(6, dtype=np.float32)
    got = xla.jit(f, target=target)(piv, x)
    want = jax.jit(f)(piv, x)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == np.asarray(w).shape
        np.testing.assert_array_equal(g, w)


def test_indirect_buffer_reference_slot_out_of_range_counted_loop_entry(target):
    """The forward loop of a flax GRUCell's gradient under lax.scan: a counted While (the
    scan's counter) whose state carries ten stacked residuals, all started from one zero
    constant.  Lowered as an scf.for straight from those initial values, it compiled, but
    IREE 3.13's VM passed the one buffer IREE had packed them into to two block arguments of
    the loop's entry branch, moved one copy and left the other argument null
    (iree-org/iree#24753): "indirect buffer reference slot 0 is out range of the declared
    binding capacity of the command buffer 0" at the first copy_buffer.  The first trip of a
    counted loop is now peeled off before the scf.for."""
    import sys
    import jax
    import jax.numpy as jnp
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "models"))
    from model_programs import _rnn
    run, (params, carry, xs) = _rnn("GRUCell")
    xs = xs[:6]
    f = jax.grad(lambda p, c, x: jnp.sum(run(p, c, x)[1] ** 2))
    got = jax.tree_util.tree_leaves(xla.jit(f, target=target)(params, carry, xs))
    want = jax.tree_util.tree_leaves(jax.jit(f)(params, carry, xs))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_circular_dependency_input_operation_uses_partition_output_peeled_trip(target):
    """flax's Dropout in training mode: threefry's five rounds are a counted While of small
    u32 arrays.  With its first trip peeled off (above) and fed straight into the scf.for,
    IREE 3.13's stream partitioning failed: "circular dependency: input operation uses
    partition output".  The peeled trip's results now enter the loop through
    util.optimization_barrier."""
    import sys
    import jax
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "models"))
    from model_programs import PROGRAMS
    f, args = PROGRAMS["dropout_train"].make()
    got = jax.tree_util.tree_leaves(xla.jit(f, target=target)(*args))
    want = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_vector_transfer_read_requires_valid_padding_complex_gather():
    """jnp.linalg.solve of a c64[256,256] permutes its right-hand side with a Gather of
    complex<f32> rows; IREE 3.13 vectorized iree_linalg_ext.gather of them into a
    vector.transfer_read it rejects ("requires valid padding vector elemental type"): complex
    gathers take the linalg.generic form (lowering/indexing.py)."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((256, 256)) + 1j * rng.standard_normal((256, 256))).astype(np.complex64)
    b = a[:, :2].copy()
    got = np.asarray(xla.jit(jax.numpy.linalg.solve)(a, b))
    want = np.asarray(jax.jit(jax.numpy.linalg.solve)(a, b))
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_binding_count_over_32_element_wise_tree(target):
    """40 arrays summed element-wise (c = c * 0.5 + x): IREE fused the whole tree into one
    dispatch, compiled it, and loading the module failed: "binding count 41 > 32; while
    invoking native function hal.command_buffer.dispatch".  The tree is cut with barriers
    (lowering/bindings.py)."""
    b = xla.Builder("wide_sum")
    xs = [b.parameter(i, Shape(F32, [4])) for i in range(40)]
    half = O.broadcast(O.constant(b, np.float32(0.5)), [4])
    c = xs[0]
    for x in xs[1:]:
        c = c * half + x
    exe = xla.compile(b.build(), target=target)
    args = [np.random.default_rng(i).standard_normal(4).astype(np.float32) for i in range(40)]
    want = args[0]
    for a in args[1:]:
        want = want * np.float32(0.5) + a
    np.testing.assert_allclose(exe(*args), want, rtol=1e-6, atol=1e-6)


def _overwrite_loop(b, x, n=4):
    """A While of state (t, y, x) that halves t while sum(x) < 5 and t > 1e-3, and sets
    y = x * t without reading y (JAX's `while err > tol` loops: the error recomputed each trip;
    x stands for a value the loop captures, carried unchanged)."""
    st = Shape.tuple([Shape(F32, ()), Shape(F32, [n]), Shape(F32, [n])])
    add = comp_of(lambda b, p, q: O.add(p, q), Shape(F32, ()), Shape(F32, ()), name="add")

    def cond(b, s):
        total = O.reduce(O.get_tuple_element(s, 2), O.constant(b, np.float32(0)), add, [0])
        return O.and_(O.lt(total, O.constant(b, np.float32(5))),
                      O.gt(O.get_tuple_element(s, 0), O.constant(b, np.float32(1e-3))))

    def body(b, s):
        t, x = O.get_tuple_element(s, 0), O.get_tuple_element(s, 2)
        return O.tuple(b, [O.mul(t, O.constant(b, np.float32(0.5))), O.mul(x, O.broadcast(t, [n])), x])
    loop = O.while_(comp_of(cond, st, name="cond"), comp_of(body, st, name="body"),
                    O.tuple(b, [O.constant(b, np.float32(1)), x, x]))
    return O.get_tuple_element(loop, 1)


@pytest.mark.parametrize("loops", ["device", "host"])
def test_region_successor_needs_inputs_while_overwriting_state(target, loops):
    """jax.scipy.optimize.minimize's line search, lax.betainc and `while err > tol` loops: a
    While whose body sets a state value without reading it.  Canonicalization drops that
    value's argument from the scf.while's `before` region (the body's half of xlair's
    do-while) while its `after` region still takes it; IREE 3.13's stream conversion gives
    both regions the operands' signature and failed: "'scf.while' op along control flow edge
    from Operation scf.condition to Region #1: region branch point has 4 operands, but region
    successor needs 2 inputs" (or crashed in ScfWhileOpConversion).  The loop is evened out, so
    that on the CPU it runs on the device as one dispatch region; left on the host (Vulkan, or
    device loops off), its function's scf ops are branches between blocks."""
    if loops == "host" and target != "cpu":
        pytest.skip("device loops are a CPU form: Vulkan's loops are on the host in the other case")
    b = xla.Builder("overwrite")
    _overwrite_loop(b, b.parameter(0, Shape(F32, [4])))
    comp = b.build()
    text = str(lower(comp, 1, target, device_loops=loops == "device"))
    if target == "cpu" and loops == "device":
        assert "flow.dispatch.region" in text and "cf.cond_br" not in text
    else:
        assert "cf.cond_br" in text and "flow.dispatch.region" not in text
    x = np.array([1.2, 1.0, 0.5, 0.3], np.float32)
    t, y = np.float32(1), x.copy()                   # the loop, step by step
    if x.sum() < 5 and t > 1e-3:
        while True:
            t, y = np.float32(t * 0.5), x * t
            if not (x.sum() < 5 and t > 1e-3):
                break
    np.testing.assert_array_equal(xla.interpret(comp, x), y)
    if loops == "device":
        np.testing.assert_array_equal(xla.compile(comp, target=target)(x), y)
    else:
        exe = xla.Executable(compile_vmfb(comp, target, device_loops=False), target)
        np.testing.assert_array_equal(exe(x), y)


def test_region_successor_needs_inputs_while_overwriting_state_in_a_loop(target):
    """The same While inside a counted loop's body (its function's other loops are branches
    too), its results summed over 3 trips."""
    st = Shape.tuple([Shape(S32, ()), Shape(F32, [4])])
    cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3))), st, name="outer_cond")

    def body(b, s):
        i, acc = O.get_tuple_element(s, 0), O.get_tuple_element(s, 1)
        return O.tuple(b, [O.add(i, O.constant(b, np.int32(1))), O.add(acc, _overwrite_loop(b, acc))])
    b = xla.Builder("outer")
    x = b.parameter(0, Shape(F32, [4]))
    O.get_tuple_element(O.while_(cond, comp_of(body, st, name="outer_body"), O.tuple(b, [O.constant(b, np.int32(0)), x])), 1)
    comp = b.build()
    x = np.array([0.2, 0.1, 0.05, 0.3], np.float32)
    want = xla.interpret(comp, x)
    acc = x.copy()                                     # by hand: y = acc * t_last, t_last = 2^-9
    for _ in range(3):
        acc = acc + acc * np.float32(2.0 ** -9)
    np.testing.assert_allclose(want, acc, rtol=1e-6)
    np.testing.assert_allclose(xla.compile(comp, target=target)(x), acc, rtol=1e-6)


@pytest.mark.parametrize("loops", ["device", "host"])
def test_crashed_in_convert_to_stream_pass_while_overwriting_state_through_a_call(target, loops):
    """JAX's lax_control_flow_test testScanHigherOrderDifferentiation_unroll2 under the PJRT
    plugin: the second-order gradient of a `lax.scan(..., unroll=2)` over three steps stacks
    its residuals in one-row tensors, written each trip by JAX's `dynamic_update_index_in_dim`,
    a function called from several places.  A one-row write replaces the whole tensor, but the
    clamp of its start hid that from canonicalization and the call hid it from the loop, so
    xlair left the While even; IREE 3.13 inlined the call, dropped the unread state from the
    loop's `before` region and crashed: "iree-compile crashed (Error code: -11) in
    ConvertToStreamPass" (ScfWhileOpConversion).  Now a start clamped to [0, 0] is the constant
    0, a call's operand its callee never reads is a tensor.empty, and the loop is the uneven
    one xlair evens out (and turns into branches on the host)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    @jax.jit
    def put(buf, row, i):
        return lax.dynamic_update_index_in_dim(buf, row, i, 0)

    def prog(x, n):
        def body(s):
            i, acc, a, b = s
            acc = jnp.sin(acc) + 1.0
            return i + 1, acc, put(a, acc, i), put(b, acc * 2.0, i)
        z = jnp.zeros((1, 2), jnp.float32)
        return lax.while_loop(lambda s: s[0] * s[0] < n, body, (0, x, z, z))
    x, n = np.array([0.5, 1.5], np.float32), np.int32(3)
    want = jax.tree_util.tree_leaves(jax.jit(prog, backend="cpu")(x, n))
    comp = xla.jit(prog, target=target).lower(x, n)
    text = str(lower(comp, 1, target, device_loops=loops == "device"))
    if "flow.dispatch.region" not in text:      # (a device loop has the calls inlined)
        # the writes' callee reads no old value, and is given none
        import re
        passed = re.findall(r"call @put\w*\((%\w+),", text)
        assert len(passed) == 2 and all(re.search(rf"{v} = tensor\.empty\(\) : tensor<1x2xf32>", text)
                                        for v in passed), text
    exe = xla.Executable(compile_vmfb(comp, target, device_loops=loops == "device"), target)
    for g, w in zip(exe(x, n), want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("form", ["select", "branch"])
def test_incompatible_buffer_types_on_then_else_branches_switch_yielding_a_parameter(target, form, monkeypatch):
    """JAX's lax_control_flow_test testSwitchJVP under the PJRT plugin: the JVP of a
    `lax.switch` whose first branch returns its operand twice, `(x, x)`.
    - As branches (form "branch": control_flow.SELECT_MAX_WORK 0), the CPU's program is one
      dispatch region; its branch yielded the parameter itself while the others yield tensors
      the dispatch makes, and IREE's bufferization failed: "incompatible buffer types on
      then/else branches" (a binding's buffer and a local one).  The branch now yields copies.
    - With the branches on the host (CUDA, ROCm, Vulkan), IREE's VM passed one buffer to two
      block arguments (iree-org/iree#24753): every form failed.  A conditional this small now
      computes every branch and selects (form "select", the default), on every target."""
    import jax
    from jax import lax
    import xlair.lowering.control_flow as cf
    if form == "branch":
        if target != "cpu":
            pytest.skip("branches on the host meet iree-org/iree#24753 (the select form is the workaround)")
        monkeypatch.setattr(cf, "SELECT_MAX_WORK", 0)

    def branch(x):
        y = 2 * x
        return y, 2 * y
    branches = [lambda x: (x, x), branch, lambda x: (x, -x)]

    def prog(i, x, t):
        return jax.jvp(lambda x: lax.switch(i, branches, x), (x,), (t,))
    for i in (0, 1, 2):
        args = (np.int32(i), np.float32(1.7), np.float32(0.5))
        want = jax.tree_util.tree_leaves(jax.jit(prog, backend="cpu")(*args))
        comp = xla.jit(prog, target=target).lower(*args)
        text = str(lower(comp, 1, target))
        assert ("scf.if" in text) == (form == "branch"), text
        # (the compile cache's key does not hold SELECT_MAX_WORK)
        got = xla.Executable(compile_vmfb(comp, target, cache=form == "select"), target)(*args)
        np.testing.assert_allclose(np.array(got, np.float32), np.array(want, np.float32), rtol=1e-6)


def test_region_successor_needs_inputs_while_overwriting_state_beside_a_device_loop():
    """Two such Whiles in one function: a small one, which goes onto the device, and one of
    f32[70000] (more work a trip than a device loop takes), left on the host.  Turning the
    function's scf ops into branches would also break the dispatch region's loop into blocks:
    the function is lowered again with both loops on the host, as branches."""
    b = xla.Builder("two_loops")
    small, large = b.parameter(0, Shape(F32, [4])), b.parameter(1, Shape(F32, [70000]))
    O.tuple(b, [_overwrite_loop(b, small), _overwrite_loop(b, large, 70000)])
    comp = b.build()
    text = str(lower(comp, 1, "cpu"))
    assert "cf.cond_br" in text and "flow.dispatch.region" not in text
    x = np.array([1.2, 1.0, 0.5, 0.3], np.float32)
    z = np.full(70000, 1e-5, np.float32)            # sum 0.7 < 5: halves t down to 2^-10
    got = xla.compile(comp)(x, z)
    np.testing.assert_array_equal(got[0], x * np.float32(2.0 ** -9))
    np.testing.assert_array_equal(got[1], z * np.float32(2.0 ** -9))


def test_streamable_op_expected_to_be_in_an_execution_region_random_gamma(target):
    """jax.random.gamma (also beta, dirichlet) with a shape: threefry's counted loops inside
    the batched rejection loops.  With counted loops as `scf.for` and their first trip peeled
    off, IREE 3.13's stream partitioning left a dispatch of the peeled trip without operands
    (`32 - r[0]`, r threefry's constant table of rotations) outside every execution region:
    "'stream.async.dispatch' op : streamable op expected to be in an execution region".  The
    peeled trip's scalar arithmetic on constants is folded (lowering/host_scalars.py), so IREE
    takes the counted form as it is; for another such refusal xlair.compile compiles the
    program with its counted loops in the general form (docs/iree-limits.md)."""
    import jax
    f = lambda seed: jax.random.gamma(jax.random.key(seed), 2.0, (4,))       # noqa: E731
    comp = xla.jit(f, target=target).lower(np.int32(42))
    tgt = xla_target(target)
    flags = program_flags(comp, tgt)
    text = str(lower(comp, 1, target, needs_of(tgt, flags), align=alignment_of(tgt, flags)))
    assert "scf.for" in text
    iree_compiled(text, tgt, flags)                  # the counted form, without the fallback
    np.testing.assert_allclose(xla.jit(f, target=target)(np.int32(42)), jax.jit(f)(np.int32(42)), rtol=1e-5)


def test_stream_yield_used_resource_not_listed_in_explicit_captures_complex_pad():
    """jax.scipy.signal's convolution_matrix of complex64 (linalg_test's testConvolutionMatrix;
    its StableHLO in data/convolution_matrix_c64.mlir): an xla.pad whose complex padding value
    a device op computed (0 converted to c64 in a called function) was filled from its element
    read back on the host, and IREE failed: "'stream.yield' op used resource not listed in
    explicit captures (or produced internally)".  Complex padding values are broadcast on the
    device.  Against the reference interpreter."""
    import pathlib
    comp = xla.from_stablehlo((pathlib.Path(__file__).parent / "data" / "convolution_matrix_c64.mlir").read_text())
    x = np.array([1 + 2j], np.complex64)
    np.testing.assert_array_equal(xla.compile(comp, target="cpu")(x), xla.interpret(comp, x))


@pytest.mark.parametrize("result", ["bf16", "f32"])
def test_failed_to_legalize_operation_vector_bitcast_bf16_matmul_vulkan(result):
    """A BF16 matmul on Vulkan (nn_test's dot_product_attention under JAX_PLATFORMS=xlair_vulkan):
    IREE's SPIR-V code read and wrote the matmul's BF16 buffers through a vector.bitcast it
    could not lower, "failed to legalize operation 'vector.bitcast'", and such programs were
    refused.  Vulkan's description now widens the operands in dispatches of their own and
    rounds the F32 product after it (bf16_matmul_widened).  Compiled for Vulkan; run where a
    Vulkan device is (lavapipe), against numpy's F64 product of the BF16 values."""
    import ml_dtypes
    from xlair.dialect.types import BF16
    from xlair.targets import device_available
    out_type = BF16 if result == "bf16" else F32
    b = xla.Builder(f"bf16_matmul_{result}")
    x, y = b.parameter(0, Shape(BF16, [32, 64])), b.parameter(1, Shape(BF16, [64, 48]))
    O.dot(x, y, preferred_element_type=out_type)
    exe = xla.compile(b.build(), target="vulkan")
    if not device_available("vulkan"):
        pytest.skip("compiled; no Vulkan device to run it on")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64)).astype(ml_dtypes.bfloat16)
    c = rng.standard_normal((64, 48)).astype(ml_dtypes.bfloat16)
    got = np.asarray(exe(a, c)).astype(np.float64)
    want = a.astype(np.float64) @ c.astype(np.float64)
    # summed in F32 (one rounding of each partial sum), the BF16 result rounded once more
    np.testing.assert_allclose(got, want, rtol=2.0 ** -8 if result == "bf16" else 1e-5, atol=1e-4)


def test_failed_to_legalize_operation_vector_bitcast_bf16_operand_fused_into_matmul_vulkan():
    """An F32 product scaled and added to a BF16 tensor converted to F32 (the gradient of JAX's
    dot_product_attention with a BF16 bias, nn_test testDotProductAttentionBiasGradient on
    xlair_vulkan): IREE fused the conversion and the add into the matmul's dispatch, whose
    SPIR-V code then read BF16 through a vector.bitcast it could not lower ("failed to legalize
    operation 'vector.bitcast'").  On Vulkan every product of a module that holds BF16 is now a
    dispatch of its own (contraction.mark_own_products).  Against numpy."""
    import ml_dtypes
    from xlair.dialect.types import BF16
    from xlair.targets import device_available
    b = xla.Builder("scores_plus_bf16_bias")
    q, k = b.parameter(0, Shape(F32, [4, 64, 32])), b.parameter(1, Shape(F32, [4, 32, 64]))
    bias = b.parameter(2, Shape(BF16, [4, 64, 64]))
    s = O.dot_general(q, k, xla.DotDimensionNumbers((2,), (1,), (0,), (0,)))
    O.add(O.mul(s, O.broadcast(O.constant(b, np.float32(0.125)), [4, 64, 64])), O.convert_element_type(bias, F32))
    exe = xla.compile(b.build(), target="vulkan")
    if not device_available("vulkan"):
        pytest.skip("compiled; no Vulkan device to run it on")
    rng = np.random.default_rng(6)
    qn, kn = rng.standard_normal((4, 64, 32)).astype(np.float32), rng.standard_normal((4, 32, 64)).astype(np.float32)
    bn = rng.standard_normal((4, 64, 64)).astype(ml_dtypes.bfloat16)
    want = 0.125 * (qn.astype(np.float64) @ kn) + bn.astype(np.float64)
    np.testing.assert_allclose(np.asarray(exe(qn, kn, bn)), want, rtol=1e-5, atol=1e-5)


def test_complex_sum_getIntOrFloatBitWidth_in_ConvertToNVVMPass(monkeypatch):
    """A complex sum fused with its consumer (`v - sum(conj(w) v) w`, a Householder step; JAX's
    QR of one C128 column) crashed iree-compile: `getIntOrFloatBitWidth` in ConvertToNVVMPass
    (CUDA, c64 and c128) and in GPUDistributeSharedMemoryCopyPass (Vulkan, c128), the complex
    accumulator kept in workgroup memory.  GPU targets sum the real and imaginary parts
    (`complex_sums_planar`, reduction._planar_sum); the programs compile for CUDA, ROCm and
    Vulkan, and the same form forced on the CPU gives jax.jit's results (an init other than 0
    included)."""
    import dataclasses

    import jax
    import jax.numpy as jnp
    import xlair.lowering.targets as lt
    rng = np.random.default_rng(5)
    fns = [lambda v, w: v - jnp.sum(jnp.conj(w) * v) * w,
           lambda v, w: jnp.sum(v[:, None] * w[None, :], axis=0) + w,
           lambda v, w: jax.lax.reduce(v * w, np.asarray(1 - 2j, v.dtype), jax.lax.add, (0,)) * v]
    for dt in (np.complex64, np.complex128):
        v, w = ((rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(dt) for _ in range(2))
        with jax.enable_x64(dt == np.complex128):
            comps = [xla.from_jax(f, v, w) for f in fns]
            for comp in comps:
                for gpu in ("cuda", "rocm", "vulkan"):
                    assert compile_vmfb(comp, gpu)[:8]
            with monkeypatch.context() as m:
                m.setitem(lt.DESCRIPTIONS, "cpu", dataclasses.replace(lt.CPU, complex_sums_planar=True))
                for f, comp in zip(fns, comps):
                    got = xla.compile(comp, "cpu")(v, w)
                    tol = 1e-5 if dt == np.complex64 else 1e-12
                    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(f)(v, w)), rtol=tol, atol=tol)
    with jax.enable_x64(True):
        column = (rng.standard_normal((4, 1)) + 1j * rng.standard_normal((4, 1))).astype(np.complex128)
        assert compile_vmfb(xla.from_jax(lambda a: tuple(jnp.linalg.qr(a)), column), "cuda")[:8]


def test_rocm_small_batch_matmul_ValueHandleBase_AddToUseList(monkeypatch):
    """A batched F32 product with 6 or 10 rows (2x6x8x8, 2x10x10x10: Jacobi's rotations in the
    F32 eigh and SVD of 5x5, 6x6 and 10x10 matrices) crashed LLVM's AMDGPU backend under
    iree-compile for ROCm (segfault in ValueHandleBase::AddToUseList), at HIGHEST and in
    bf16x3.  ROCm's batch_m_multiple pads such a product's rows with zeros to a multiple of 4;
    the programs compile for ROCm, and the same form forced on the CPU gives numpy's products
    (eigh: numpy's eigenvalues)."""
    import dataclasses

    import jax.numpy as jnp
    import xlair.lowering.targets as lt
    rng = np.random.default_rng(7)
    prods = [(rng.standard_normal((2, m, k)).astype(np.float32), rng.standard_normal((2, k, n)).astype(np.float32))
             for m, k, n in ((6, 8, 8), (10, 10, 10), (3, 5, 2))]
    sym = rng.standard_normal((2, 6, 6)).astype(np.float32)
    sym = sym + np.swapaxes(sym, -1, -2)
    matmul = xla.from_jax(lambda x, y: jnp.matmul(x, y, precision="highest"), *prods[0])
    eigh = xla.from_jax(jnp.linalg.eigvalsh, sym)
    for comp in (matmul, eigh):
        assert compile_vmfb(comp, "rocm")[:8]
    with monkeypatch.context() as m:
        m.setitem(lt.DESCRIPTIONS, "cpu", dataclasses.replace(lt.CPU, batch_m_multiple=4))
        for x, y in prods:
            comp = xla.from_jax(lambda x, y: jnp.matmul(x, y, precision="highest"), x, y)
            got = np.asarray(xla.compile(comp, "cpu")(x, y))
            np.testing.assert_allclose(got, np.matmul(x.astype(np.float64), y), rtol=1e-5, atol=1e-5)
        got = np.asarray(xla.compile(eigh, "cpu")(sym))
        np.testing.assert_allclose(got, np.linalg.eigvalsh(sym.astype(np.float64)), rtol=1e-4, atol=1e-4)



@pytest.mark.parametrize("gpu", ["cuda"])
def test_fused_sum_failed_to_get_neutral_element_or_failed_to_distribute(gpu, monkeypatch):
    """IREE 3.13's CUDA code generation fails on a sum with a negation fused into it ("failed
    to get neutral element for reduction") or a product with a constant ("'func.func' op failed
    to distribute"): those sums read their operand from a dispatch of their own
    (reduction._breaks_fused_sum), and the programs compile; a sum of exp(x - c) and a max of
    a negation stay fused (no barrier: one dispatch fewer than before).  (ROCm keeps a barrier
    before every reduction of a computed operand: its code failed on more fused sums.)"""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from xlair.dialect.ir import context, lock
    sums = {
        "neg_sum": lambda a: jnp.sum(-a, axis=1),
        "const_mul_sum": lambda a: jnp.sum(a * 2.5, axis=1),
        "row_const_mul_sum": lambda a: jnp.sum(a * jnp.arange(8.0, dtype=jnp.float32)[:, None], axis=1),
        "layernorm_grad": jax.grad(lambda a: jnp.sum(jax.nn.standardize(a, axis=1) * jnp.arange(64.0))),
        "exp_sum": lambda a: jnp.sum(jnp.exp(a - 1.0), axis=1),
        "max_neg": lambda a: jnp.max(-a, axis=1),
    }
    x = np.zeros((8, 64), np.float32)
    for name, f in sums.items():
        comp = xla.from_jax(f, x)
        assert compile_vmfb(comp, gpu)[:8], name
        if name in ("exp_sum", "max_neg"):
            module = lower(comp, 1, gpu)
            with lock, context():
                assert "util.optimization_barrier" not in str(module), name
    # the form before (reduction_barriers="all", measured against by bench_gpu.FORMS)
    import dataclasses
    import xlair.lowering.targets as lt
    monkeypatch.setitem(lt.DESCRIPTIONS, gpu, dataclasses.replace(lt.DESCRIPTIONS[gpu], reduction_barriers="all"))
    module = lower(xla.from_jax(sums["exp_sum"], x), 1, gpu)
    with lock, context():
        assert "util.optimization_barrier" in str(module)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_failed_to_legalize_operation_mului_extended_sin_of_a_broadcast_product(target, dtype):
    """sin(a * x) with a broadcast along rows (a positional encoding's form; JAX's vmap of
    lax.igamma over broadcast operands in shape_poly_test): IREE's CPU code keeps the two loop
    dimensions, and its vector<1x16xi32> products of the argument reduction (Payne-Hanek) were
    "failed to legalize operation 'arith.mului_extended' that was explicitly marked illegal".
    The reduction now takes the high words from the halves' products.  Values against numpy
    in F64, arguments up to 1e9 (reduced by Payne-Hanek on every target) and 1e20 (F64)."""
    if dtype == np.float64 and target == "vulkan":
        pytest.skip("F64 is not computed on Vulkan")
    rng = np.random.default_rng(3)
    big = 1e20 if dtype == np.float64 else 1e9
    a = np.geomspace(1, big / 100, 24).astype(dtype).reshape(1, 24)
    x = rng.uniform(-100, 100, (20, 24)).astype(dtype)
    b = xla.Builder("sin_of_broadcast_product")
    pa = b.parameter(0, Shape(xla.F64 if dtype == np.float64 else F32, [1, 24]))
    px = b.parameter(1, Shape(xla.F64 if dtype == np.float64 else F32, [20, 24]))
    O.sin(O.mul(O.broadcast_in_dim(O.reshape(pa, [24]), [20, 24], [1]), px))
    got = xla.compile(b.build(), target=target)(a, x)
    prod = (a * x).astype(np.float64)          # the product rounded as the program rounds it
    ulp = np.spacing(np.abs(np.sin(prod)).astype(dtype)).astype(np.float64)
    assert np.all(np.abs(got - np.sin(prod)) <= 4 * np.maximum(ulp, np.finfo(dtype).tiny))


def _scan_with_inner_loop(x, n):
    """A reverse scan whose body runs a While, stacking four outputs (their zeros one constant)."""
    import jax.numpy as jnp
    from jax import lax

    def body(c, xi):
        _, y = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5 + xi), (0, xi))
        return c + y, (xi * 2, jnp.exp(xi), y, c - xi)
    return lax.scan(body, jnp.zeros((), x.dtype), x, reverse=True)[1]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_c128_scan_of_an_inner_loop_splat_of_128_bits(target, dtype):
    """A scan's stacked complex outputs start from one complex zero, which the peeled first trip
    updates in place four times.  IREE 3.13 has no splat of a complex constant: it made it a
    dispatch, copied it for each update by running that dispatch again, then CSE merged the
    copies into one buffer every update wrote (C64: the last row of all four outputs mixed, no
    error); and the inner loop's complex result, read back on the host to be a rank-0 tensor,
    was "'stream.async.splat' op operand #0 must be 8-bit ... or 64-bit signless integer" for
    C128.  Complex constant splats are planar fills of opaque parts, and a loop's non-integer
    scalar result a reshape.  Against jax.jit on XLA:CPU."""
    jax = pytest.importorskip("jax")
    if dtype == np.complex128 and target == "vulkan":
        pytest.skip("C128 is not computed on Vulkan")
    x = (np.arange(10) * (0.5 + 0.25j)).astype(dtype)
    with jax.enable_x64(dtype == np.complex128):
        got = xla.jit(_scan_with_inner_loop, target=target)(x, np.int32(3))
        want = jax.jit(_scan_with_inner_loop, backend="cpu")(x, np.int32(3))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_buffer_may_be_null_complex_odeint_gradient():
    """jax.experimental.ode's odeint of a complex ODE, differentiated: IREE's VM would read a
    null buffer in every form of the program's loops ("may be null in vm.call
    @hal.command_buffer.copy_buffer", iree-org/iree#24753), from the complex zeros its scans
    stack into (see test_c128_scan_of_an_inner_loop_splat_of_128_bits).  Against jax.jit.
    The CPU's: Vulkan keeps the broadcast form and still fails so (docs/iree-limits.md)."""
    target = "cpu"
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental.ode import odeint

    def f(y0, ts, alpha):
        return odeint(lambda y, t, a: a * y * jnp.exp(-t).astype(y.dtype), y0, ts, alpha).real.sum()
    g = jax.grad(f, argnums=(0, 2))
    y0, alpha = np.complex64(1 + 2j), np.complex64(3 + 4j)
    ts = np.linspace(0., 1., 11).astype(np.float32)
    got = xla.jit(g, target=target)(y0, ts, alpha)
    want = jax.jit(g, backend="cpu")(y0, ts, alpha)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5)
