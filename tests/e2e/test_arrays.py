"""Device-resident arrays: `xla.device_put`, executables and `xla.jit` taking and returning
`xla.Array`s, and the in-place writes of IREE that an Array must never see
(lowering/aliasing.py, iree-org/iree#16168)."""
import importlib

import numpy as np
import pytest

import xlair as xla
from xlair import F32, S32, Shape
from xlair import ops as O
from xlair_testing import E2E_TARGETS

aliasing = importlib.import_module("xlair.lowering.aliasing")


def _update_program(n=8):
    """x with x[2:5] replaced by u (a DynamicUpdateSlice of parameter 0)."""
    b = xla.Builder("update")
    x = b.parameter(0, Shape(F32, (n,)), "x")
    u = b.parameter(1, Shape(F32, (3,)), "u")
    O.dynamic_update_slice(x, u, [O.constant(b, np.int32(2))])
    return b.build()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_,
                                   np.complex64, np.float16])
def test_device_put_round_trip(dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    x = xla.device_put(a)
    assert isinstance(x, xla.Array)
    assert x.shape == (3, 4) and x.dtype == np.dtype(dtype) and x.ndim == 2 and x.size == 12
    assert x.nbytes == a.nbytes and len(x) == 3 and x.target == "cpu"
    back = np.asarray(x)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    a[0, 0] = 1            # the Array is a copy: later changes to the source do not reach it
    np.testing.assert_array_equal(np.asarray(x)[0, 0], np.zeros((), dtype))


def test_device_put_pytrees_and_errors():
    tree = {"w": [np.ones(2, np.float32), (np.int32(3),)], "b": np.zeros((1, 2))}
    put = xla.device_put(tree)
    assert isinstance(put["w"][0], xla.Array) and isinstance(put["w"][1][0], xla.Array)
    assert put["w"][1][0].shape == () and put["b"].dtype == np.float64
    assert xla.device_put(put["b"]) is put["b"]
    with pytest.raises(xla.XlaError, match="no XLA element type"):
        xla.device_put(np.array(["a", "b"]))
    with pytest.raises(xla.XlaError, match="unknown target|target"):
        xla.device_put(np.ones(2), target="tpu")


def test_executable_takes_and_returns_arrays():
    b = xla.Builder("axpy")
    a = b.parameter(0, Shape(F32, ()), "a")
    x = b.parameter(1, Shape(F32, (16,)), "x")
    y = b.parameter(2, Shape(F32, (16,)), "y")
    O.tuple(b, [O.add(O.mul(a, x, broadcast_dimensions=()), y), O.reduce(
        x, O.constant(b, np.float32(0)), _add(), [0])])
    exe = xla.compile(b.build(), target="cpu")
    xs, ys = np.arange(16, dtype=np.float32), np.full(16, 0.5, np.float32)
    dx = xla.device_put(xs)
    # one Array among numpy arguments: every result leaf is an Array
    r, s = exe(np.float32(2), dx, ys)
    assert isinstance(r, xla.Array) and isinstance(s, xla.Array)
    np.testing.assert_array_equal(np.asarray(r), 2 * xs + 0.5)
    assert np.asarray(s) == xs.sum()
    # results feed the next call without leaving the device
    r2, _ = exe(np.float32(1), r, xla.device_put(ys))
    np.testing.assert_array_equal(np.asarray(r2), 2 * xs + 1.0)
    # every argument an Array (the call path's loop for device-resident calls), and Arrays
    # before a numpy leaf (what that loop pushed is dropped; each leaf is taken as it is)
    r4, s4 = exe(xla.device_put(np.float32(3)), dx, xla.device_put(ys))
    np.testing.assert_array_equal(np.asarray(r4), 3 * xs + 0.5)
    assert np.asarray(s4) == xs.sum()
    r5, _ = exe(xla.device_put(np.float32(3)), dx, ys)
    assert isinstance(r5, xla.Array)
    np.testing.assert_array_equal(np.asarray(r5), 3 * xs + 0.5)
    # no arguments (no Array among them): numpy out
    k = xla.Builder("constant")
    O.add(O.constant(k, np.float32(1)), O.constant(k, np.float32(2)))
    three = xla.compile(k.build(), target="cpu")()
    assert type(three) is np.ndarray and three == 3
    # numpy in: numpy out, as before
    r3, _ = exe(np.float32(2), xs, ys)
    assert type(r3) is np.ndarray
    with pytest.raises(xla.XlaError, match=r"argument 1 must be f32\[16\]; got an xla.Array f32\[8\]"):
        exe(np.float32(2), xla.device_put(np.ones(8, np.float32)), ys)
    with pytest.raises(xla.XlaError, match=r"argument 1 must be f32\[16\]; got an xla.Array s32\[16\]"):
        exe(np.float32(2), xla.device_put(np.ones(16, np.int32)), ys)


def _add():
    b = xla.Builder("add")
    O.add(b.parameter(0, Shape(F32, ()), "a"), b.parameter(1, Shape(F32, ()), "b"))
    return b.build()


def test_iree_16168_dynamic_update_slice_would_write_the_argument_buffer():
    """IREE 3.13 stores a DynamicUpdateSlice of a parameter into the argument's buffer
    (iree-org/iree#16168).  The signature lists that parameter as written, and an Array passed
    there is copied first: it holds its values after any number of calls."""
    exe = xla.compile(_update_program(), target="cpu")
    assert exe._written == {0}
    x = xla.device_put(np.zeros(8, np.float32))
    for k in range(3):
        out = exe(x, np.full(3, k + 1, np.float32))
        np.testing.assert_array_equal(np.asarray(x), np.zeros(8, np.float32))
        np.testing.assert_array_equal(np.asarray(out), [0, 0, k + 1, k + 1, k + 1, 0, 0, 0])
    # what the copy prevents (IREE 3.13): handed over as it is, the Array is written
    from xlair import runtime
    exe._written = frozenset()
    exe._quick = exe._direct = runtime._call_path(exe)     # the call path, remade without the copy
    exe(x, np.full(3, 9, np.float32))
    np.testing.assert_array_equal(np.asarray(x), [0, 0, 9, 9, 9, 0, 0, 0])


def _mapped_address(a: xla.Array) -> int:
    from xlair.device import layout, mapped
    return mapped(a._bv, layout(a._shape)).ctypes.data


def test_results_have_buffers_of_their_own():
    """No result of a program shares an argument Array's buffer, as no XLA result does: not
    where the program returns its argument as it is or a view of it (the signature's
    "returned", lowering/aliasing.py), nor where IREE folds an op into its operand (x * 1,
    select(true, x, y): found by the first call, runtime._shared_results).  Each is called
    three times (the first call and the call path after it), by the general path as well."""
    jnp = pytest.importorskip("jax").numpy
    h = np.arange(16, dtype=np.float32)
    x = xla.device_put(h)
    cases = {"identity": (lambda a: a, h), "reshape": (lambda a: a.reshape(2, 8), h.reshape(2, 8)),
             "slice": (lambda a: a[:4], h[:4]), "times one": (lambda a: a * 1.0, h),
             "select": (lambda a: jnp.where(True, a, 0.0), h), "pair": (lambda a: (a + 1, a), (h + 1, h))}
    for name, (f, want) in cases.items():
        g = xla.jit(f)
        for k in range(3):
            got = g(x)
            for r, w in (zip(got, want) if isinstance(got, tuple) else [(got, want)]):
                assert isinstance(r, xla.Array), name
                assert _mapped_address(r) != _mapped_address(x), (name, k)
                np.testing.assert_array_equal(np.asarray(r), w, err_msg=name)
    b = xla.Builder("identity")
    b.parameter(0, Shape(F32, (16,)), "x")
    exe = xla.compile(b.build(), target="cpu")
    assert exe._returned == {0}           # named by the signature, before any call
    exe._quick = exe._direct = None       # the general path
    assert _mapped_address(exe(x)) != _mapped_address(x)


def _lowered_main(text: str, what=aliasing.written_parameters):
    from xlair.dialect.ir import context, ir, lock
    with lock, context():
        m = ir.Module.parse(text)
        main = [op.operation for op in m.body.operations
                if ir.StringAttr(op.attributes["sym_name"]).value == "main"][0]
        return what(main)


def test_written_parameters_follows_views_calls_and_branches():
    text = """
    func.func private @put(%d: tensor<8xf32>, %s: tensor<2xf32>) -> tensor<8xf32> {
      %r = tensor.insert_slice %s into %d[0] [2] [1] : tensor<2xf32> into tensor<8xf32>
      return %r : tensor<8xf32>
    }
    func.func private @get(%d: tensor<8xf32>) -> tensor<2xf32> {
      %r = tensor.extract_slice %d[0] [2] [1] : tensor<8xf32> to tensor<2xf32>
      %z = tensor.empty() : tensor<2xf32>
      %c = linalg.copy ins(%r : tensor<2xf32>) outs(%z : tensor<2xf32>) -> tensor<2xf32>
      return %c : tensor<2xf32>
    }
    func.func private @same(%d: tensor<8xf32>) -> tensor<8xf32> {
      return %d : tensor<8xf32>
    }
    func.func @main(%a: tensor<8xf32>, %b: tensor<2x4xf32>, %c: tensor<8xf32>, %d: tensor<2xf32>,
                    %e: tensor<8xf32>, %p: i1, %f: tensor<8xf32>, %g: tensor<8xf32>)
                    -> (tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>) {
      %0 = tensor.empty() : tensor<8xf32>
      %1 = linalg.copy ins(%a : tensor<8xf32>) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
      %2 = tensor.collapse_shape %b [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
      %3 = linalg.copy ins(%1 : tensor<8xf32>) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
      %4 = func.call @get(%c) : (tensor<8xf32>) -> tensor<2xf32>
      %5 = scf.if %p -> tensor<8xf32> {
        scf.yield %e : tensor<8xf32>
      } else {
        scf.yield %3 : tensor<8xf32>
      }
      %6 = func.call @put(%5, %d) : (tensor<8xf32>, tensor<2xf32>) -> tensor<8xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %7 = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %f) -> tensor<8xf32> {
        scf.yield %t : tensor<8xf32>
      }
      %8 = func.call @same(%g) : (tensor<8xf32>) -> tensor<8xf32>
      %9 = tensor.insert_slice %4 into %8[4] [2] [1] : tensor<2xf32> into tensor<8xf32>
      %10 = tensor.insert_slice %d into %4[0] [2] [1] : tensor<2xf32> into tensor<2xf32>
      return %6, %4, %7, %9, %10 : tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>
    }"""
    # b: an init through a reshape; e: through scf.if into a callee's insert destination;
    # f: a loop's initial value (loops are not followed); g: returned by a callee as it is, then
    # an insert's destination.  a, c (inputs; a callee's read, whose result, a new tensor, is
    # written), d (what is inserted) and p (not a tensor) are read.
    assert _lowered_main(text) == [1, 4, 6, 7]
    # no result is an argument it does not write: %6 and %9 pass on written ones
    assert _lowered_main(text, aliasing.parameter_aliases) == ([1, 4, 6, 7], [])


def test_returned_results_follow_views_calls_and_branches():
    text = """
    func.func private @same(%d: tensor<8xf32>) -> tensor<8xf32> {
      return %d : tensor<8xf32>
    }
    func.func @main(%a: tensor<8xf32>, %b: tensor<2x4xf32>, %c: tensor<8xf32>, %p: i1, %e: tensor<8xf32>)
                    -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %0 = tensor.empty() : tensor<8xf32>
      %1 = linalg.copy ins(%a : tensor<8xf32>) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
      %2 = tensor.collapse_shape %b [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
      %3 = tensor.extract_slice %c[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
      %4 = scf.if %p -> tensor<8xf32> {
        scf.yield %1 : tensor<8xf32>
      } else {
        scf.yield %e : tensor<8xf32>
      }
      %5 = func.call @same(%a) : (tensor<8xf32>) -> tensor<8xf32>
      return %1, %2, %3, %4, %5, %1 : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }"""
    # 0 and 5: a new tensor (a copy of a); 1: b reshaped; 2: a slice of c; 3: e in one branch
    # of an scf.if; 4: a, returned by a callee as it is
    assert _lowered_main(text, aliasing.parameter_aliases) == ([], [1, 2, 3, 4])


def test_arrays_stay_on_the_device_through_a_jax_training_loop():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def step(params, x, y):
        def loss(p):
            return jnp.mean((jnp.tanh(x @ p["w"] + p["b"]) - y) ** 2)
        lv, g = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, params, g), lv

    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((8, 4)).astype(np.float32), "b": np.zeros(4, np.float32)}
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.standard_normal((32, 4)).astype(np.float32)
    f = xla.jit(step)
    dp = xla.device_put(params)
    jp = params
    for _ in range(4):
        dp, loss = f(dp, x, y)
        jp, jloss = jax.jit(step)(jp, x, y)
        assert isinstance(dp["w"], xla.Array) and isinstance(loss, xla.Array)
        np.testing.assert_allclose(np.asarray(loss), np.asarray(jloss), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(dp["w"]), np.asarray(jp["w"]), rtol=1e-5, atol=1e-6)
    assert len(f._cache) == 1      # Arrays and numpy arrays of one shape share the compiled program


@pytest.mark.skipif("vulkan" not in E2E_TARGETS, reason="no Vulkan device here (lavapipe not installed)")
def test_arrays_on_vulkan_and_across_targets():
    exe = xla.compile(_update_program(), target="vulkan")
    x = xla.device_put(np.arange(8, dtype=np.float32), target="vulkan")
    assert x.target == "vulkan"
    out = exe(x, np.ones(3, np.float32))
    assert isinstance(out, xla.Array) and out.target == "vulkan"
    np.testing.assert_array_equal(np.asarray(x), np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 1, 1, 1, 5, 6, 7])
    # an Array of the CPU given to a Vulkan program is moved there
    cpu = xla.device_put(np.zeros(8, np.float32))
    np.testing.assert_array_equal(np.asarray(exe(cpu, np.ones(3, np.float32))), [0, 0, 1, 1, 1, 0, 0, 0])
    moved = xla.device_put(cpu, target="vulkan")
    assert moved.target == "vulkan" and np.asarray(moved).sum() == 0


@pytest.mark.skipif("vulkan" not in E2E_TARGETS, reason="no Vulkan device here (lavapipe not installed)")
def test_vulkan_array_passed_again_to_a_replayed_command_buffer():
    """One Vulkan Array passed to every call of a program, beside a new one each call (JAX's
    lax_vmap_test testStack on xlair_vulkan): with IREE's indirect command buffers (recorded
    once, replayed with each call's bindings) every other call returned the first call's rows
    and zeros; Vulkan's flags now record them per call (targets.VULKAN_FLAGS).  Against numpy."""
    b = xla.Builder("stack_two")
    x, y = b.parameter(0, Shape(F32, [2, 3])), b.parameter(1, Shape(F32, [2, 3]))
    O.concatenate([O.reshape(x, [1, 2, 3]), O.reshape(y, [1, 2, 3])], 0)
    exe = xla.compile(b.build(), target="vulkan")
    rng = np.random.default_rng(0)
    xs, y_host = rng.standard_normal((4, 2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    y_dev = xla.device_put(y_host, target="vulkan")
    for k in range(4):
        out = exe(xla.device_put(xs[k], target="vulkan"), y_dev)
        np.testing.assert_array_equal(np.asarray(out), np.stack([xs[k], y_host]), err_msg=f"call {k}")


@pytest.mark.skipif("vulkan" not in E2E_TARGETS, reason="no Vulkan device here (lavapipe not installed)")
def test_gpu_numpy_arguments_in_kept_device_buffers():
    """A GPU call's numpy arguments are copied into device buffers kept from call to call
    (device.to_device_all's `taken`; IREE's CUDA allocator frees device memory with cuMemFree,
    a wait for the whole device): each call's result is its own arguments' (against numpy),
    and after a call the device keeps its two argument buffers for the next."""
    from xlair.device import ARGUMENT, _staging
    b = xla.Builder("stack_kept")
    x, y = b.parameter(0, Shape(F32, [2, 3])), b.parameter(1, Shape(F32, [2, 3]))
    O.concatenate([O.reshape(x, [1, 2, 3]), O.reshape(O.neg(y), [1, 2, 3])], 0)
    exe = xla.compile(b.build(), target="vulkan")
    rng = np.random.default_rng(1)
    xs, ys = rng.standard_normal((2, 5, 2, 3)).astype(np.float32)
    for k in range(5):
        out = exe(xs[k], ys[k])
        assert isinstance(out, np.ndarray)
        np.testing.assert_array_equal(out, np.stack([xs[k], -ys[k]]), err_msg=f"call {k}")
        assert len(_staging(exe._device)._free.get((ARGUMENT, xs[k].nbytes), ())) >= 2


def test_scalar_results_and_s32():
    b = xla.Builder("count")
    x = b.parameter(0, Shape(S32, (5,)), "x")
    O.reduce(x, O.constant(b, np.int32(0)), _add_s32(), [0])
    exe = xla.compile(b.build(), target="cpu")
    r = exe(xla.device_put(np.arange(5, dtype=np.int32)))
    assert isinstance(r, xla.Array) and r.shape == () and int(np.asarray(r)) == 10
    with pytest.raises(TypeError):
        len(r)


def _add_s32():
    b = xla.Builder("add")
    O.add(b.parameter(0, Shape(S32, ()), "a"), b.parameter(1, Shape(S32, ()), "b"))
    return b.build()


def test_one_element_array_as_python_number():
    """float(), int(), complex() and bool() of a one-element Array, as of a numpy array (a
    training loop's `float(loss)`)."""
    x = xla.device_put(np.float32(2.5))
    assert float(x) == 2.5 and int(x) == 2 and complex(x) == 2.5 + 0j and bool(x) is True
    assert bool(xla.device_put(np.zeros((1, 1), np.int32))) is False
    with pytest.raises(TypeError):
        float(xla.device_put(np.ones(3, np.float32)))


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_typed_prng_keys_in_and_out_of_jit(impl):
    """A step taking a typed key (`jax.random.key`) and returning the next one with a sample,
    chained over calls as a training loop does: xlair.jit passes each key's data and makes the
    key results keys of the same implementation again, on its quick call path from the second
    call on, with the values jax.jit gives; a key of another implementation (another key
    shape) is another signature, compiled again."""
    import jax

    def step(key, x):
        key, sub = jax.random.split(key)
        return key, x + jax.random.normal(sub, x.shape)
    x = np.zeros(3, np.float32)
    mine, ref = xla.jit(step), jax.jit(step)
    k1 = k2 = jax.random.key(5, impl=impl)
    y1 = y2 = x
    for _ in range(3):
        k1, y1 = mine(k1, y1)
        k2, y2 = ref(k2, y2)
        assert k1.dtype == k2.dtype and k1.shape == k2.shape
        np.testing.assert_array_equal(jax.random.key_data(k1), jax.random.key_data(k2))
        np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-6)
    assert mine._last is not None                   # (the quick path was taken)
    other = "rbg" if impl == "threefry2x32" else "threefry2x32"
    k3, y3 = mine(jax.random.key(5, impl=other), x)
    k4, y4 = ref(jax.random.key(5, impl=other), x)
    np.testing.assert_array_equal(jax.random.key_data(k3), jax.random.key_data(k4))
    np.testing.assert_allclose(y3, y4, rtol=1e-5, atol=1e-6)


class _CountingDevice:
    """A GPU device seen through what xlair's transfers ask of it: each allocation's memory
    type, the semaphores made (one a batch of copies) and the copies on the queue."""

    def __init__(self, device):
        self._device, self.allocations, self.semaphores, self.copies = device, [], 0, 0
        outer = self

        class Allocator:
            def allocate_buffer(self, memory_type, allowed_usage, allocation_size):
                outer.allocations.append((memory_type, allocation_size))
                return device.allocator.allocate_buffer(memory_type=memory_type, allowed_usage=allowed_usage,
                                                        allocation_size=allocation_size)

            def __getattr__(self, name):
                return getattr(device.allocator, name)
        self.allocator = Allocator()

    def create_semaphore(self, value):
        self.semaphores += 1
        return self._device.create_semaphore(value)

    def queue_copy(self, *args, **kwargs):
        self.copies += 1
        return self._device.queue_copy(*args, **kwargs)


@pytest.mark.skipif("vulkan" not in E2E_TARGETS, reason="no Vulkan device here (lavapipe not installed)")
def test_gpu_transfers_in_one_batch_device_local_with_reused_staging_buffers():
    """Issue 39 item 6, what the H200 showed: numpy in and out cost 10x the compute.  A GPU
    program's arguments are device-local buffers (IREE's allocate_buffer_copy asks host-visible
    ones: CUDA managed memory), copied in through host staging buffers that are kept for the
    next call (CUDA pins new pages for each), all the leaves of a call one chain of copies the
    host waits for once; results come back the same way, through host-cached buffers."""
    import iree.runtime as rt
    from xlair import device as D
    from xlair.dialect.types import element_type
    dev = _CountingDevice(D.config("vulkan").device)
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([1, -2, 3], np.int32),
              np.zeros((0, 5), np.float32), np.array(True)]
    leaves = [(a, Shape(element_type(a.dtype), a.shape), None) for a in arrays]
    M = rt.MemoryType
    for call in range(2):
        dev.allocations.clear()
        bvs = D.to_device_all(dev, leaves)
        # one buffer a leaf, device-local and not host-visible; the staging buffers of the
        # first call are taken again by the second
        args = [(m, n) for m, n in dev.allocations if m & int(M.DEVICE_LOCAL) == int(M.DEVICE_LOCAL)]
        assert len(args) == len(arrays) and not any(m & int(M.HOST_VISIBLE) for m, _ in args)
        staged = len(dev.allocations) - len(args)
        assert staged == (3 if call == 0 else 0)        # (nothing to copy for the empty array)
        got = D.from_device_all(dev, [(bv, s) for bv, (_, s, _) in zip(bvs, leaves)])
        for g, a in zip(got, arrays):
            assert g.dtype == a.dtype and np.array_equal(g, a)
    # per call one semaphore in and one out; a copy per non-empty leaf each way
    assert dev.semaphores == 4 and dev.copies == 12
    reads = [m for m, _ in dev.allocations if not m & int(M.DEVICE_LOCAL) == int(M.DEVICE_LOCAL)]
    assert reads == []                                   # the second call's reads: reused buffers


@pytest.mark.skipif("vulkan" not in E2E_TARGETS, reason="no Vulkan device here (lavapipe not installed)")
def test_a_lost_vulkan_device_is_replaced(monkeypatch):
    """VK_ERROR_DEVICE_LOST (lavapipe's intermittent loss, docs/iree-limits.md): the executable
    is loaded again on a new device and runs once more; executables loaded later get the new
    device; a program whose argument lives on the lost device raises XlaError saying so."""
    device = importlib.import_module("xlair.device")
    runtime = importlib.import_module("xlair.runtime")
    exe = xla.compile(_update_program(), target="vulkan")
    old = device.config("vulkan").device
    real, fails = runtime.Executable._invoke_leaves, [1]

    def lost_once(self, replica, flat, run):
        if fails:
            fails.pop()
            raise xla.XlaError("executable update failed at run time on vulkan: UNAVAILABLE; "
                               "VK_ERROR_DEVICE_LOST; vkWaitSemaphores")
        return real(self, replica, flat, run)

    monkeypatch.setattr(runtime.Executable, "_invoke_leaves", lost_once)
    x = np.arange(8, dtype=np.float32)
    exe._quick = exe._direct = None
    got = exe(x, np.full(3, -1, np.float32))
    np.testing.assert_array_equal(got, [0, 1, -1, -1, -1, 5, 6, 7])
    new = device.config("vulkan").device
    assert new is not old and exe._device is new
    later = xla.compile(_update_program(4), target="vulkan")
    assert later._device is new
    assert later(x[:4], x[:3]).tolist() == [0, 0, 1, 2]       # the start 2 clamped to 4 - 3

    on_new = xla.device_put(x, target="vulkan")
    fails.append(1)
    exe._quick = exe._direct = None
    with pytest.raises(xla.XlaError, match="the device was lost: executable update and those loaded after"):
        exe(on_new, x[:3])
    assert device.config("vulkan").device is not new


def test_a_lost_vulkan_device_in_a_replicated_run_is_replaced(monkeypatch):
    """A replicated run (threads sharing one rendezvous) that loses the device raises XlaError
    naming the replica and saying so; the executable is loaded again on a new device, and its
    next run is right: each replica's sum of both replicas' values, derived by hand."""
    from xlair_testing import scalar_computation
    device = importlib.import_module("xlair.device")
    runtime = importlib.import_module("xlair.runtime")
    b = xla.Builder("ar")
    O.all_reduce(b.parameter(0, Shape(F32, (2,)), "x"), scalar_computation("add", F32))
    exe = xla.compile(b.build(), target="vulkan", replicas=2)
    old = device.config("vulkan").device
    real, fails = runtime.Executable._invoke_leaves, [1]

    def lost_once(self, replica, flat, run):
        if fails and replica == 1:
            fails.pop()
            raise xla.XlaError("executable ar failed at run time on vulkan: UNAVAILABLE; VK_ERROR_DEVICE_LOST")
        return real(self, replica, flat, run)

    monkeypatch.setattr(runtime.Executable, "_invoke_leaves", lost_once)
    args = [[np.array([1, 2], np.float32)], [np.array([10, 20], np.float32)]]
    with pytest.raises(xla.XlaError, match="failed on replica 1: .*the device was lost: executable ar and those"):
        exe.run_replicated(args, timeout=5)
    assert exe._device is not old and device.config("vulkan").device is exe._device
    for got in exe.run_replicated(args):
        np.testing.assert_array_equal(got, [11, 22])
