"""`Executable`: a compiled computation loaded into IREE's runtime, called with numpy."""
from __future__ import annotations

import functools
import hashlib
import json
from operator import is_
import os
import sys
import threading

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.types import Shape, element_type

from . import cpus, effects, host
from .artifacts import cache_read, cache_write, is_sealed
from .arrays import Array, Pack
from .device import config as _config, from_device as _from_device, iree_runtime as _rt, layout as _layout
from .device import COPY_OUT_BYTES, IMPORT_BYTES, WORKER_STACK, _device_buffers, import_array as _import_array
from .device import result_view as _result_view, run_waiting as _run_waiting, wire as _wire
from .device import device_lost as _device_lost, forget as _forget_device
from .device import to_device as _to_device  # noqa: F401  (also bench/harness.py's)
from .device import from_device_all as _from_device_all, give_back as _give_back, to_device_all as _to_device_all
from . import packing
from .packing import PACKED_FN, layout_key, packable
from .targets import artifact_target, target as find_target
from .values import check_args, flatten, is_prng_key, parse_shape, unflatten

#: Programs whose heaviest op does less work than this (lowering/cost.py: multiply-adds, an
#: element of an element-wise op counting 16) run on IREE's local-sync driver, which runs
#: dispatches inline on the calling thread, instead of local-task, which hands each dispatch
#: to a worker thread and waits for it: 30-80 us less per call and 5-20x faster loops, at the
#: price of one core for programs whose every op is small (bench/NOTES.md sections 4 and 10).
#: 0 turns it off.
INLINE_WORK = int(os.environ.get("XLAIR_CPU_INLINE_WORK", 1 << 26))
#: Artifacts made before the signature carried "work": at most this many bytes of arguments
#: and results run inline.
INLINE_BYTES = 16384


def _runs_inline(sig: dict, params, result) -> bool:
    if int(sig.get("replicas", 1)) != 1:
        return False            # replicas keep the task system
    if "work" in sig:
        return int(sig["work"]) < INLINE_WORK
    if sig.get("host"):
        return False
    total = sum(_layout(s)[2] for p in list(params) + [result] for s in p.leaves())
    return total <= INLINE_BYTES


def _check_stack(sig: dict, name: str) -> None:
    """A CPU artifact whose dispatches ask for more stack than xlair's task workers have would
    overflow them (a segmentation fault): refused when loaded."""
    stack = sig.get("stack")
    if stack is not None and not (isinstance(stack, int) and 0 < stack < WORKER_STACK):
        raise XlaError(f"the artifact {name!r}: its signature's \"stack\" must be a number of bytes below the "
                       f"{WORKER_STACK} bytes of xlair's CPU worker stacks (device.WORKER_STACK); got {stack!r}")


def _signature_from_vm(vm_module) -> dict:
    fn = vm_module.lookup_function("main")
    if fn is None:
        raise XlaError("the artifact has no exported function 'main'")
    text = fn.reflection.get("xlair.signature")
    if text is None:
        raise XlaError("the artifact carries no xlair signature (not made by xlair)")
    return json.loads(text)


class Executable:
    """A computation compiled for one target.  Call it with numpy arrays (or scalars); a
    tuple result comes back as a Python tuple."""

    def __init__(self, vmfb: bytes, target: str | None = None):
        rt = _rt()
        self._vmfb = bytes(vmfb)
        made_for = artifact_target(self._vmfb)
        self.target = find_target(target or made_for or "cpu")
        if made_for is not None and made_for != self.target.name:
            raise XlaError(f"the artifact holds code for {made_for}, not {self.target.name}; "
                           f"load it with target={made_for!r} (or recompile it for {self.target.name})")
        cfg = _config(self.target.driver)
        try:     # IREE's loader raises RuntimeError, IndexError, UnicodeDecodeError, ... on bad bytes
            self._vm_module = rt.VmModule.copy_buffer(cfg.vm_instance, self._vmfb)
            sig = _signature_from_vm(self._vm_module)
            self.name = sig.get("name", "main")
            self.parameter_shapes = tuple(parse_shape(p) for p in sig["params"])
            self.result_shape = parse_shape(sig["result"])
            self.replicas = int(sig.get("replicas", 1))
            #: the estimated work of its heaviest op (lowering/cost.py), when the artifact says
            self.work = int(sig["work"]) if "work" in sig else None
            #: the pass options of the form its loops were compiled in when IREE refused the
            #: first or its VM would have failed on it (compile_vmfb's fallbacks: "counted=off",
            #: "loops=host", "barriers=outside-loops"); () for the first form
            self.form = tuple(sig.get("form", ()))
            if self.target.backend == "llvm-cpu":  # before IREE loads code this CPU cannot run
                cpus.check_runnable(self._vmfb, sig.get("cpu"), f"the artifact {self.name!r}")
                _check_stack(sig, self.name)
            self.driver = self.target.driver
            #: the CPU drivers work in host memory: results are viewed, host calls share buffers
            self._host_memory = self.target.backend == "llvm-cpu"
            if self.driver == "local-task" and _runs_inline(sig, self.parameter_shapes, self.result_shape):
                self.driver = "local-sync"
                cfg = _config(self.driver)
                self._vm_module = rt.VmModule.copy_buffer(cfg.vm_instance, self._vmfb)
            self._setup_host(sig, cfg)
        except XlaError:
            raise
        except Exception as e:  # noqa: BLE001
            raise XlaError(f"not a loadable IREE module for {self.target.name}: "
                           f"{type(e).__name__}: {str(e)[:500]}") from None
        self._device = cfg.device
        #: set by xlair.compile: rebuilds of the program, tried in turn when IREE's VM fails on a loop
        self._fallbacks = ()
        self._fn = self._vm_module.lookup_function("main")
        self._leaves_in = [s for p in self.parameter_shapes for s in p.leaves()]
        self._leaves_out = self.result_shape.leaves()
        # per leaf, what the copy in and the view out need (computed once, not per call)
        self._wire_in = [_wire(s) for s in self._leaves_in]
        #: argument leaves IREE may update in place (lowering/aliasing.py): an xla.Array
        #: passed there is copied first.  Artifacts made before the signature said: all.
        self._written = frozenset(sig.get("written", range(len(self._leaves_in))))
        #: result leaves that may be an argument's buffer as IREE returns it: those the signature
        #: names (lowering/aliasing.py: an argument returned as it is or as a view), and those the
        #: first call with Arrays finds (`_shared_results`: where IREE folded an op into its
        #: operand, `x * 1`, `select(true, x, y)`).  Made Arrays, they are copied, so that no
        #: result shares an argument's memory, as XLA's results do not.
        self._returned = frozenset(sig.get("returned", ()))
        self._probed = False
        host_mapped = self._host_memory
        #: the alignment the CPU code assumes of its buffers (targets.CPU_BUFFER_ALIGNMENT):
        #: numpy arguments aligned so are passed without a copy; None (artifacts made before
        #: the signature said, which assume IREE's 64): every argument copied
        align = sig.get("align")
        self._align = align if host_mapped and type(align) is int and align >= 16 and not align & (align - 1) \
            else None
        self._view_out = [_layout(s) if host_mapped and not s.is_token else None for s in self._leaves_out]
        #: (first, count, layout key, entry point, out_first or None) of the argument leaves the
        #: program also takes packed (its signature's "packed", xlair.packing), on the CPU; else None
        self._packed = _packed_entry(sig.get("packed"), self._leaves_in, self._leaves_out,
                                     self._vm_module) if host_mapped else None
        self._single_out = not self.result_shape.is_tuple
        #: the call in one closure, or None (see _call_path); `_direct` when the arguments of
        #: `__call__` are the leaves (no tuple or token parameter): arrays of the parameters'
        #: exact types go straight to it (check_args: 1.9 us for two)
        self._quick = _call_path(self)
        self._direct = None if any(p.is_tuple or p.is_token for p in self.parameter_shapes) else self._quick

    def _setup_host(self, sig: dict, cfg) -> None:
        """Side effects and replicas (python/xlair/host.py): one VM context per replica, each
        with its own instance of the host module bound to the replica's HostContext."""
        self._cfg = cfg
        self._device = cfg.device
        self._sites = host.parse_sites(sig)
        for site in self._sites:
            site.check(self.replicas)
        #: seconds any wait of a side effect or collective may take before it raises XlaError
        self.timeout = effects.DEFAULT_TIMEOUT
        self._hosts = [effects.HostContext(r, self.name) for r in range(self.replicas)]
        self._contexts: dict[int, object] = {}
        self._locks = [threading.Lock() for _ in range(self.replicas)]
        self._lock = self._locks[0]
        self._ctx = self._context(0)
        if self._sites:
            host.track(self)

    def _context(self, replica: int):
        """The VM context of one replica (made on first use)."""
        ctx = self._contexts.get(replica)
        if ctx is None:
            rt = _rt()
            modules = [self._vm_module]
            if self._sites:
                modules.insert(0, host.host_module(self._sites, self._hosts[replica], self._device, self._host_memory))
            ctx = rt.SystemContext(vm_modules=modules, config=self._cfg)
            if self._vm_module.lookup_function("xlair_set_replica") is not None:
                ctx.modules.module["xlair_set_replica"](np.asarray(replica, np.int32))
            self._contexts[replica] = ctx
        return ctx

    # -- infeed / outfeed ------------------------------------------------------------------------
    @property
    def infeed(self) -> "effects.Feed":
        """The infeed queue (of replica 0): `exe.infeed.put(value)` before or during a run."""
        return self._hosts[0].infeed_queue

    @property
    def outfeed(self) -> "effects.Feed":
        """The outfeed queue (of replica 0): `exe.outfeed.get(timeout=...)`, `len(exe.outfeed)`."""
        return self._hosts[0].outfeed_queue

    def infeed_queue(self, replica: int = 0) -> "effects.Feed":
        return self._hosts[self._replica_index(replica)].infeed_queue

    def outfeed_queue(self, replica: int = 0) -> "effects.Feed":
        return self._hosts[self._replica_index(replica)].outfeed_queue

    def _replica_index(self, replica) -> int:
        if isinstance(replica, bool) or not isinstance(replica, (int, np.integer)) or \
                not 0 <= replica < self.replicas:
            raise XlaError(f"replica must be in [0, {self.replicas}); got {replica!r}")
        return int(replica)

    def __repr__(self):
        return (f"<xla.Executable {self.name} on {self.target.name}: "
                f"({', '.join(map(repr, self.parameter_shapes))}) -> {self.result_shape}>")

    def __call__(self, *args):
        direct = self._direct
        out = direct(args) if direct is not None else None  # arrays of the parameters' exact types
        if type(out) is not list:
            if self.replicas != 1:
                raise XlaError(f"executable {self.name} was compiled for {self.replicas} replicas: run it with "
                               "run_replicated([args of replica 0, ...]) or run_on_rank(comm, args)")
            flat = self._leaves(check_args(self.parameter_shapes, args, f"executable {self.name}", arrays=True))
            # (after IREE failed in the closure, straight to the general path)
            out = self.call_leaves(flat) if out is None else self._call_general(flat)
        return out[0] if self._single_out else unflatten(out, self.result_shape)

    def _leaves(self, vals) -> list:
        """The argument leaves of checked argument values (tuples flattened)."""
        return [leaf for v, s in zip(vals, self.parameter_shapes) for leaf in flatten(v, s)]

    def call_leaves(self, flat: list) -> list:
        """Run on the argument leaves, numpy arrays or `xla.Array`s of the leaves' shapes and
        dtypes (checked by the caller: `__call__`, or `xlair.jit`, whose signature key holds
        them), and return the result leaves: `xla.Array`s when an argument leaf is one, numpy
        arrays otherwise.  The per-call path of `xlair.jit`."""
        out = self._quick(flat) if self._quick is not None else None
        return out if type(out) is list else self._call_general(flat)

    def _call_general(self, flat: list) -> list:
        """`call_leaves` by the general path (`_invoke_leaves`), with the loop fallbacks."""
        # the rendezvous of side effects, for programs that have them
        run = effects.ReplicaRun(1, self.timeout, channels=effects._GLOBAL_CHANNELS) if self._sites else None
        renewed = False
        while True:
            try:
                return self._invoke_leaves(0, flat, run)
            except XlaError as e:
                if _device_lost(e) and not renewed:
                    renewed = True
                    if self._renew_device(flat):
                        continue
                    raise self._lost(e.message) from None
                if not self._fall_back(e):
                    raise

    def _renew_device(self, flat: list) -> bool:
        """After IREE lost the device (lavapipe's intermittent VK_ERROR_DEVICE_LOST,
        docs/iree-limits.md): the driver's next executables get a new device, this one is
        loaded again on it, and says whether to run again: once, for a program without side
        effects (nothing of the failed run is visible) whose arguments are not in buffers of
        the lost device."""
        lost = self._device
        _forget_device(self.driver, lost)
        self._reload(self._vmfb, self._fallbacks)
        return not self._sites and not any(type(a) is Array and a._device is lost for a in flat)

    def _lost(self, message: str) -> XlaError:
        """The error of a run that lost the device (after _renew_device)."""
        return XlaError(f"{message}; the device was lost: executable {self.name} and those loaded after it "
                        "run on a new device")

    #: IREE 3.13's VM failing on a buffer passed twice into a loop (iree-org/iree#24753), and
    #: a dispatch region of xlair's device loops whose results IREE merged and then gave one
    #: result another's smaller buffer (docs/iree-limits.md)
    _VM_LOOP_BUG = ("ref is null", "indirect buffer reference slot", "exceeds backing buffer byte length")

    def _fall_back(self, e: XlaError) -> bool:
        """After IREE's VM failed on a loop (docs/iree-limits.md), rebuild the executable by the
        next of its fallbacks (counted loops in the general form; then loops on the host too)
        and say whether to run again.  Only for a program without side effects (nothing of the
        failed run is visible) that `xlair.compile` made (it knows the computation)."""
        if not self._fallbacks or self._sites or not any(m in str(e) for m in self._VM_LOOP_BUG):
            return False
        rebuild, *rest = self._fallbacks
        self._reload(rebuild(), rest)
        return True

    def _reload(self, vmfb: bytes, fallbacks) -> None:
        """This executable made again, in place, from `vmfb` on the driver's current device,
        with `fallbacks` (see _fall_back) left."""
        new = Executable(vmfb, self.target.name)
        new._fallbacks = tuple(fallbacks)
        self.__dict__.update(new.__dict__)

    # run_replicated (replicas in threads) and run_on_rank (MPI) are methods set by xlair.replicas,
    # which runs the replicas of an Executable (the runtime sits below it)

    def _invoke(self, replica: int, vals, run):
        """Run replica `replica` on checked argument values, its side effects in `run`."""
        return unflatten(self._invoke_leaves(replica, self._leaves(vals), run), self.result_shape)

    def _invoke_leaves(self, replica: int, flat: list, run) -> list:
        """Run replica `replica` on argument leaves; the result leaves: `xla.Array`s when an
        argument leaf is one (left in their device buffers), else numpy arrays, no two sharing
        memory.  The general path: for programs with side effects or replicas, devices that do
        not work in host memory, arguments passed without a copy, and whatever the call path
        of `_call_path` hands on."""
        rt = _rt()
        hctx = self._hosts[replica] if self._sites else None
        device = self._device
        with self._locks[replica]:
            ctx = self._contexts.get(replica) or self._context(replica)
            if hctx is not None:
                hctx.run, hctx.error = run, None
            try:
                ins = rt.VmVariantList(len(flat))
                push = ins.push_ref
                arrays = Array in map(type, flat)
                # numpy arguments the program never writes are passed as they are, unless the
                # results are to be Arrays (which must not hold the caller's memory)
                align = self._align if not arrays else None
                imported = []
                written = self._written
                bvs = []             # per leaf its buffer view, or None: one of the copies below
                copies = []          # the leaves copied in, (array, shape, wire) each
                for i, (a, s, io) in enumerate(zip(flat, self._leaves_in, self._wire_in)):
                    if type(a) is Array:     # its own buffer, in the common case
                        bv = a._bv
                        bvs.append(bv if bv is not None and a._device is device and i not in written
                                   else a.buffer_for(device, self._host_memory, i in written))
                        continue
                    bv = _import_array(device, a, s, io, align) if align and i not in written else None
                    if bv is None:
                        copies.append((a, s, io))
                    else:
                        imported.append(a)
                    bvs.append(bv)
                # a GPU's argument copies in kept buffers, given back once the results are read
                # (numpy results: none of them is an argument's buffer)
                taken = [] if copies and not arrays and not self._host_memory else None
                copied = iter(_to_device_all(device, copies, taken) if copies else ())
                for bv in bvs:
                    push(bv if bv is not None else next(copied))
                n_out = len(self._leaves_out)
                outs = rt.VmVariantList(n_out)
                if self.driver == "local-task":
                    _run_waiting(ctx.vm_context.invoke, self._fn, ins, outs)
                else:
                    ctx.vm_context.invoke(self._fn, ins, outs)
                if len(outs) != n_out:
                    raise XlaError(f"executable {self.name} returned {len(outs)} values; its signature "
                                   f"says {n_out}")
                get = outs.get_as_object
                view = rt.HalBufferView
                if arrays:
                    results = [Array(get(i, view), s, device, self.target) if not s.is_token
                               else _from_device(device, get(i, view), s, copy=False)
                               for i, s in enumerate(self._leaves_out)]
                    _own_results(self, results, outs, ins)
                else:
                    results = []
                    reads = []       # the results read back from the device: (index, view, shape)
                    for i, (s, lay) in enumerate(zip(self._leaves_out, self._view_out)):
                        bv = get(i, view)
                        r = _result_view(bv, lay) if lay is not None else None
                        if r is None:
                            reads.append((i, bv, s))
                        results.append(r)
                    if reads:
                        got = _from_device_all(device, [(bv, s) for _, bv, s in reads], copy=False)
                        for (i, _, _), r in zip(reads, got):
                            results[i] = r
                    if n_out > 1 or imported:
                        _unshare(results, imported)
                    if taken:
                        del ins, outs, bvs
                        _give_back(device, taken)
            except (RuntimeError, ValueError, IndexError) as e:   # IREE raises IndexError for OUT_OF_RANGE
                err = None
                if hctx is not None:
                    err, hctx.error = hctx.error, None
                if isinstance(err, XlaError):
                    raise XlaError(err.message, op=err.op, param=err.param, location=err.location) from None
                if err is not None:
                    raise XlaError(f"executable {self.name}: a host call failed: {type(err).__name__}: "
                                   f"{err}") from None
                if isinstance(e, XlaError):
                    raise
                raise XlaError(f"executable {self.name} failed at run time on {self.target.name}: "
                               f"{e}") from None
            finally:
                if hctx is not None:
                    hctx.run = None
        return results

    @property
    def vmfb(self) -> bytes:
        return self._vmfb

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self._vmfb)

    def seed(self, n: int) -> None:
        """Seed the generator behind RngUniform / RngNormal: its state becomes (key n, counter 0)
        (see lowering/random.py).  A program without those ops has no generator; then a no-op."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise XlaError(f"Executable.seed takes an integer; got {n!r}")
        if self._vm_module.lookup_function("xlair_rng_seed") is None:
            return
        value = np.asarray(int(n) & (2 ** 64 - 1), np.uint64).view(np.int64)
        for r in range(self.replicas):
            with self._locks[r]:
                self._context(r).modules.module["xlair_rng_seed"](value)


#: what the closure of _call_path returns when IREE failed (the general path runs the call again)
IREE_FAILED = object()


def _call_path(exe: Executable):
    """The call of a single-replica CPU program without side effects, as one closure over what
    it needs (IREE's bound methods; each leaf's dtype, dims and element type), or None for
    other programs.  The closure takes the argument leaves, numpy arrays or `xla.Array`s, and
    returns the result leaves as `_invoke_leaves` does (Arrays when an argument is one), or
    None when a leaf is none of a C-contiguous numpy array, an Array or a numpy scalar of its
    parameter's dtype and dims or when a numpy leaf could be passed without a copy (import_array), and
    IREE_FAILED when IREE fails: the general path (`_invoke_leaves`) then handles the call (a
    program without side effects may run twice).  It saves the general path's per-leaf tests and calls: 3-4 us
    a call (bench/NOTES.md section 19)."""
    if exe.replicas != 1 or exe._sites or not exe._host_memory or None in exe._view_out:
        return None
    ins = []     # per leaf: what the closure's per-leaf loop needs
    for i, (s, (wire_dt, et)) in enumerate(zip(exe._leaves_in, exe._wire_in)):
        dtype, dims, nbytes = _layout(s)
        if s.is_token:
            return None
        written = i in exe._written
        importable = bool(exe._align) and nbytes >= IMPORT_BYTES and not written
        ins.append((dtype, dims, None if wire_dt == dtype else wire_dt, et, written, importable))
    outs = list(zip(exe._leaves_out, exe._view_out))
    # large results are views of their buffers (device.result_view): two may be one buffer
    unshare = sum(lay[2] > COPY_OUT_BYTES for _, lay in outs) > 1
    rt = _rt()
    new_list, view, ndarray, generic, asarray = rt.VmVariantList, rt.HalBufferView, np.ndarray, np.generic, np.asarray
    device, target = exe._device, exe.target
    alloc = device.allocator.allocate_buffer_copy
    memory, usage = _device_buffers()
    invoke, fn, lock = exe._ctx.vm_context.invoke, exe._fn, exe._locks[0]
    if exe.driver == "local-task":
        invoke = functools.partial(_run_waiting, invoke)
    n_in, n_out = len(ins), len(outs)
    # the leaves' (dims, dtype) when every leaf may be an Array's buffer passed as it is (no
    # parameter written in place): a call on such Arrays (device-resident: xla.jit, the PJRT
    # plugin) takes the loop below that tests each leaf once (0.6 us of 4 a call, docs/pjrt.md)
    resident = None if exe._written else tuple((dims, dtype) for dtype, dims, *_ in ins)

    def push_leaves(push, flat, specs) -> bool | None:
        """Push argument leaves; whether one is an Array, or None when a leaf is not the
        closure's."""
        arrays = False
        for a, (dtype, dims, wire_dt, et, written, importable) in zip(flat, specs):
            kind = type(a)
            if kind is ndarray:
                if a.shape != dims or a.dtype != dtype or importable or not a.flags.c_contiguous:
                    return None
                push(alloc(memory, usage, device, a if wire_dt is None else a.view(wire_dt), et))
            elif kind is Array and a.shape == dims and (a.dtype is dtype or a.dtype == dtype):
                arrays = True
                bv = a._bv
                push(bv if bv is not None and a._device is device and not written
                     else a.buffer_for(device, True, written))
            elif isinstance(a, generic) and not dims and a.dtype == dtype:    # a numpy scalar
                a = asarray(a)
                push(alloc(memory, usage, device, a if wire_dt is None else a.view(wire_dt), et))
            else:
                return None
        return arrays

    packed = exe._packed
    if packed is not None:
        first, count, key, packed_fn, out_first = packed
        stop = first + count
        before, after = ins[:first], ins[stop:]
        n_groups = len(packing.groups(tuple(exe._leaves_in[first:stop])))
        n_packed = first + n_in - stop + n_groups
        # the results: of the leaf entry point's, those before and after the packed run
        # (out_first), which the packed entry point returns as n_groups groups
        if out_first is None:
            packed_outs, run_out = outs, ()
        else:
            packed_outs = outs[:out_first] + [None] * n_groups + outs[out_first + count:]
            run_out = tuple((s, lay[1], lay[0]) for s, lay in outs[out_first:out_first + count])

    def call(flat):            # the result leaves, or None (not the closure's), or IREE_FAILED
        if len(flat) != n_in:
            return None
        if packed is not None:
            # the leaves of one xla.device_put pytree where the program takes them packed
            a = flat[first]
            p = a._pack if type(a) is Array else None
            if p is not None and p.key == key and all(map(is_, p.members, flat[first:stop])):
                args = new_list(n_packed)
                push = args.push_ref
                if push_leaves(push, flat[:first], before) is None:
                    return None
                for bv in p.buffers:
                    push(bv)
                if push_leaves(push, flat[stop:], after) is None:
                    return None
                results = run(packed_fn, args, len(packed_outs))
                if results is IREE_FAILED:
                    return results
                if out_first is None:
                    out = arrays_of(results, outs)
                    if exe._returned:
                        _own_buffers(out, exe._returned, device, True)
                    return out
                # the packed results: new Arrays of one Pack, without buffers of their own
                out = arrays_of(results, packed_outs)
                leaves = tuple(Array(None, s, device, target, dims, dtype) for s, dims, dtype in run_out)
                Pack.of_results(leaves, key, out[out_first:out_first + n_groups])
                out[out_first:out_first + n_groups] = leaves
                if exe._returned:           # (the leaves' positions again)
                    _own_buffers(out, exe._returned, device, True)
                return out
        args = new_list(n_in)
        arrays = resident is not None and n_in > 0     # (no arguments: numpy results)
        if arrays:
            push = args.push_ref
            for a, (dims, dtype) in zip(flat, resident):
                # (an Array of this target, on any of its devices: they share host memory, as
                # Array.buffer_for says; _host_memory is this path's condition)
                if type(a) is not Array or a.dtype is not dtype or a._target is not target or \
                        a._bv is None or a.shape != dims:
                    arrays = False          # (not all such Arrays: each leaf as it is)
                    args = new_list(n_in)
                    break
                push(a._bv)
        if not arrays:
            arrays = push_leaves(args.push_ref, flat, ins)
            if arrays is None:
                return None
        results = run(fn, args, n_out)
        if results is IREE_FAILED:
            return results
        if not arrays:
            return numpy_of(results)
        out = arrays_of(results, outs)
        probing = not exe._probed
        _own_results(exe, out, results, args)
        if probing and not exe._returned:
            call.resident = resident_spec
        return out

    def run(fn, args, n):
        """IREE's results of fn on args (n of them), or IREE_FAILED."""
        results = new_list(n)
        try:
            with lock:
                invoke(fn, args, results)
        except (RuntimeError, ValueError, IndexError):
            return IREE_FAILED
        return results if len(results) == n else IREE_FAILED

    def arrays_of(results, kinds) -> list:
        """The results left in their buffers, as Arrays (`kinds`: per result, its (shape,
        layout), or None for a group: its buffer view)."""
        get = results.get_as_object
        out = []
        for i, kind in enumerate(kinds):
            if kind is None:
                out.append(get(i, view))
            else:
                s, (dtype, dims, _) = kind
                out.append(Array(get(i, view), s, device, target, dims, dtype))
        return out

    def numpy_of(results) -> list:
        get = results.get_as_object
        out = []
        for i, (s, lay) in enumerate(outs):
            bv = get(i, view)
            r = _result_view(bv, lay)
            out.append(r if r is not None else _from_device(device, bv, s, copy=False))
        if unshare:
            _unshare(out)
        return out
    # the resident call as data (RESIDENT's fields), for a caller in C that makes it without
    # this closure's bytecode: the PJRT plugin's Execute (pjrt/shim.c `call_resident`, 1-2 us
    # less a call, bench/NOTES.md section 31); set once the first call with Arrays has found
    # that no result is an argument's buffer (C makes each result an Array as it is)
    resident_spec = None if resident is None or not n_in else (
        new_list, invoke, fn, lock, resident, target,
        tuple((s, dims, dtype) for s, (dtype, dims, _) in outs), Array, view, device)
    call.resident = resident_spec if exe._probed and not exe._returned else None
    return call


def _own_results(exe: Executable, out: list, results, args) -> None:
    """Give the Arrays of a call's results `out` that may be an argument's buffer buffers of
    their own (`exe._returned`; the first call with Arrays adds what `_shared_results` finds in
    IREE's `results` and `args`)."""
    if not exe._probed:
        exe._probed = True
        exe._returned |= _shared_results(results, args)
    if exe._returned:
        _own_buffers(out, exe._returned, exe._device, exe._host_memory)


def _shared_results(results, args) -> frozenset:
    """The positions of the results (IREE's VmVariantList of buffer views) whose buffer is the
    buffer of one of the arguments (the list handed to IREE): `_returned`'s run-time half.  Once
    a program.  (IREE's buffers compare by address but hash by object: the arguments' are
    grouped by size, and each result's compared with those of its size.)"""
    view = _rt().HalBufferView
    by_size: dict[int, list] = {}
    for i in range(len(args)):
        b = args.get_as_object(i, view).get_buffer()
        by_size.setdefault(b.byte_length(), []).append(b)
    shared = []
    for i in range(len(results)):
        r = results.get_as_object(i, view).get_buffer()
        if any(b == r for b in by_size.get(r.byte_length(), ())):
            shared.append(i)
    return frozenset(shared)


def _own_buffers(out: list, positions, device, host_memory: bool) -> None:
    """Give the Arrays of `out` at `positions` buffers of their own (copies; a pack's leaf,
    without a buffer, makes its own when asked: Array.buffer_for)."""
    for i in positions:
        r = out[i]
        if type(r) is Array and r._bv is not None:
            out[i] = Array(r.buffer_for(device, host_memory, True), r._shape, device, r._target)


#: the fields of a call path's `resident` tuple (pjrt/shim.c reads them by position): IREE's
#: VmVariantList, the context's invoke, the entry point, the call's lock, per argument leaf its
#: (dims, dtype), the target, per result leaf its (shape, dims, dtype), the Array type, IREE's
#: HalBufferView, the device.  A call on Arrays of that target, with those dims and dtypes and
#: buffers of their own, pushes their buffers, invokes under the lock and makes each result
#: `Array(view, shape, device, target, dims, dtype)`, as the closure's resident loop does.
RESIDENT = ("new_list", "invoke", "fn", "lock", "ins", "target", "outs", "array", "view", "device")


def _packed_entry(packed, leaves: list, leaves_out: list, vm_module) -> tuple | None:
    """(first, count, layout key, entry point, out_first or None) from a signature's "packed"
    [first, count] or [first, count, out_first], or None when it has none (or not a run of
    array leaves, or no such entry point)."""
    if not (type(packed) is list and len(packed) in (2, 3) and all(type(v) is int for v in packed)):
        return None
    first, count = packed[:2]
    out_first = packed[2] if len(packed) == 3 else None
    run = tuple(leaves[first:first + count])
    if first < 0 or count < 1 or len(run) != count or any(s.is_tuple or s.is_token for s in run):
        return None
    if out_first is not None and (out_first < 0 or tuple(leaves_out[out_first:out_first + count]) != run):
        return None
    fn = vm_module.lookup_function(PACKED_FN)
    return None if fn is None else (first, count, layout_key(run), fn, out_first)


def _unshare(host: list, inputs: list = ()) -> None:
    """Copy results that share memory with an earlier result (one buffer returned twice) or
    with an argument passed without a copy (`inputs`: import_array; a program returning its
    argument returns its buffer), so that no returned array aliases another or the caller's.
    Only views of mapped buffers can (small results are copied out: device.result_view).  Up
    to 8 views and no inputs, every pair (np.shares_memory: 0.6 us a pair); else their byte
    ranges sorted (3 us an array for its address: n log n; every pair was a third of a call
    with 111 results, an optax state's)."""
    views = [i for i, a in enumerate(host) if a.nbytes and not a.flags.owndata]
    if len(views) <= 8 and not inputs:
        seen = []
        for i in views:
            a = host[i]
            if any(np.shares_memory(a, b) for b in seen):
                host[i] = a = a.copy()
            seen.append(a)
        return
    # one sweep in address order: the results kept do not overlap one another, so of those
    # before a span only the last kept can reach into it
    spans = sorted([(_span(host[i]), i) for i in views] + [(_span(a), -1) for a in inputs])
    end_in, last, end_last = None, None, None
    for (lo, hi), i in spans:
        if i < 0:                                   # an input: the result kept before it
            if last is not None and lo < end_last:
                host[last] = host[last].copy()
                last = None
            end_in = hi if end_in is None else max(end_in, hi)
        elif (end_in is not None and lo < end_in) or (last is not None and lo < end_last):
            host[i] = host[i].copy()
        else:
            last, end_last = i, hi


def _span(a: np.ndarray) -> tuple:
    """[first byte, last byte + 1) of an array (results are C-contiguous: the quick case)."""
    if a.flags.c_contiguous:
        lo = a.__array_interface__["data"][0]
        return lo, lo + a.nbytes
    return tuple(_byte_bounds(a))


try:
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:   # numpy < 2
    _byte_bounds = np.byte_bounds


def load(path: str | os.PathLike, target: str | None = None, *, isolate: bool = True,
         expected_sha256: str | None = None) -> Executable:
    """Load a `.vmfb` written by `Executable.save` or `xlair-compile`.  The artifact carries its
    signature and the kind of device code it holds, so `target` may be left out.

    An artifact is code: a CPU artifact's runs in this process.  `expected_sha256` (the hex
    digest of the whole file, as `sha256sum` prints it) pins the artifact to the one its
    author built: any other is an `XlaError` before IREE sees its bytes.  (The seal below is a
    digest anyone can compute: it tells damage, not authorship.)

    xlair's artifacts end in their sha256 (see `xlair.artifacts.seal`): a mismatch is an
    `XlaError`.  Corrupt device code can crash IREE's ELF loader (a segfault, measured with
    bytes overwritten in the embedded executable), so an artifact without xlair's seal is, with
    `isolate` (the default), first loaded and run once on zeros in a child process, whose death
    becomes an `XlaError` (a best effort: IREE's crashes on such bytes are not always
    reproducible from one process to the next)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise XlaError(f"cannot read {path}: {e}") from None
    if expected_sha256 is not None:
        _check_sha256(data, expected_sha256, path)
    sealed = is_sealed(data)
    if sealed is False:
        raise XlaError(f"{path} is corrupt: its sha256 does not match the digest xlair wrote at its end")
    if sealed is None and isolate:
        _vet(data, path, target)
    return Executable(data, target)


def _check_sha256(data: bytes, expected, path) -> None:
    want = expected.strip().lower() if isinstance(expected, str) else expected
    if not (isinstance(want, str) and len(want) == 64 and all(c in "0123456789abcdef" for c in want)):
        raise XlaError(f"xla.load expected_sha256 must be a sha256 digest of 64 hexadecimal digits; got {expected!r}",
                       op="xla.load", param="expected_sha256")
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        raise XlaError(f"xla.load expected_sha256 {want} must be the sha256 of {path} (an artifact is code: "
                       f"not loaded); got {got}", op="xla.load", param="expected_sha256")


_VETTED: set[str] = set()
_VET_CHILD = r"""
import sys
import numpy as np
from xlair.runtime import Executable
exe = Executable(open(sys.argv[1], "rb").read(), sys.argv[2])
def zeros(s):
    return tuple(zeros(t) for t in s.tuple_shapes) if s.is_tuple else np.zeros(s.dims, s.dtype)
shapes = exe.parameter_shapes
if not exe._sites and not any(s.is_token for p in shapes for s in p.leaves()) and \
        sum(int(np.prod(s.dims)) * s.dtype.itemsize for p in shapes for s in p.leaves()) < 2**26:
    print("loaded", flush=True)
    exe(*[zeros(p) for p in shapes])     # a trial run on zeros: corrupt code may crash only here
"""


def _vet(data: bytes, path, target: str | None, timeout: float = 60.0) -> None:
    """Load the artifact in a child process and run it once on zero arguments (when they are
    small and hold no tokens, and the program has no side effects: an Infeed would wait); the child's death by a signal, or a hang while loading, is an
    XlaError.  A trial run that does not finish is inconclusive (a program may loop on zeros).
    Artifacts that pass are remembered by content hash (in this process and in the compile
    cache directory, whose markers are read only as its artifacts are: artifacts.cache_read),
    so loading the same file again costs nothing."""
    import subprocess
    import sys
    import tempfile
    key = hashlib.sha256(data).hexdigest()
    marker = f"vetted/{key}"
    if key in _VETTED or cache_read(marker) is not None:
        return
    try:
        name = find_target(target or artifact_target(data) or "cpu").name
    except XlaError:
        return           # the in-process load reports the unknown target
    with tempfile.NamedTemporaryFile(suffix=".vmfb") as f:
        f.write(data)
        f.flush()
        try:
            r = subprocess.run([sys.executable, "-c", _VET_CHILD, f.name, name],
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            if b"loaded" in (e.stdout or b""):
                return   # the trial run on zeros did not finish: inconclusive (it may loop on zeros)
            raise XlaError(f"loading {path} did not finish in {timeout:.0f} s (in a child process); "
                           f"the artifact is corrupt or not made for this machine") from None
    if r.returncode < 0:
        stage = "running it on zeros" if b"loaded" in r.stdout else "loading it"
        raise XlaError(f"{stage} crashed the IREE runtime (signal {-r.returncode}, in a child process): "
                       f"{path} is corrupt or not made for this machine")
    if r.returncode == 0:
        _VETTED.add(key)
        cache_write(marker, b"")
    # any other failure: the in-process load below raises the XlaError with IREE's message


def device_put(x, target: str = "cpu"):
    """`x` copied to `target`'s device as an `xla.Array`.  A pytree of arrays becomes the same
    pytree of Arrays: tuples, named tuples, lists and dicts, and, when JAX is imported, every
    pytree JAX knows (flax and optax states).  An Array already on that target is returned
    as is; a JAX typed PRNG key is left as it is.  On the CPU, the leaves of a JAX pytree of
    at least `packing.MIN_LEAVES` arrays (at most `packing.MAX_BYTES`) are also kept packed
    (arrays.Pack): a program that `xla.jit` compiled for them takes them as one buffer per
    element type (xlair.packing)."""
    tgt = find_target(target)
    device, host_memory = _config(tgt.driver).device, tgt.backend == "llvm-cpu"
    jax = sys.modules.get("jax")
    if jax is None:
        return _put(x, tgt, device, host_memory)
    tree_util = jax.tree_util
    values, tree = tree_util.tree_flatten(x)
    # a typed PRNG key (jax.random.key; an nnx state's rng streams) stays as it is: xlair.jit
    # passes its data
    leaves = [v if is_prng_key(getattr(v, "dtype", None)) else _put(v, tgt, device, host_memory) for v in values]
    if host_memory and all(type(a) is Array for a in leaves) and packable([a._shape for a in leaves]):
        Pack(tuple(leaves), device, [v if type(v) is not Array else np.asarray(v) for v in values])
    return tree_util.tree_unflatten(tree, leaves)


def _put(x, tgt, device, host_memory):
    if isinstance(x, Array):
        if x._target.name == tgt.name:
            return x
        return Array(x.buffer_for(device, host_memory, False), x._shape, device, tgt)
    if isinstance(x, (tuple, list)):
        items = [_put(v, tgt, device, host_memory) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: _put(v, tgt, device, host_memory) for k, v in x.items()}
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise XlaError(f"device_put takes arrays (or tuples, lists, dicts of them); got "
                       f"{type(x).__name__} ({e})") from None
    try:
        et = element_type(a.dtype)
    except (TypeError, ValueError, XlaError):
        raise XlaError(f"device_put: no XLA element type for numpy dtype {a.dtype} "
                       f"(a {type(x).__name__})") from None
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    shape = Shape(et, a.shape)
    return Array(_to_device(device, a, shape), shape, device, tgt)
