/* The C fast path of xlair's PJRT plugin (docs/pjrt.md, "The C shim").
 *
 * The plugin's PJRT_Api table is built from Python (api.py: one ctypes callback per call).
 * JAX makes ~15 PJRT calls around each execution, most of them with a fixed answer, and each
 * callback into Python costs ~0.5 us before its body runs.  This library takes that table
 * (the "inner" one) and makes a copy of it in which those fixed-answer calls are answered
 * here, in C, without entering Python; every other slot is the inner table's function
 * pointer, copied.  Loaded with ctypes.PyDLL by shim.py; built by the Makefile.
 *
 * Answered here:
 *   - Error_Destroy of no error (JAX destroys a null error after every execution): nothing to
 *     do.  An error is forwarded.
 *   - events: xlair's events are all ready when made (engine.Event).  READY_EVENT below is one
 *     static, immortal event; Python hands it out for the readiness of buffers, Execute's
 *     completion and host transfers.  For it, IsReady is true, Error and Await return no error,
 *     OnReady calls the callback at once, Destroy does nothing.  Any other event (one carrying
 *     an error, made by Python) is forwarded to the inner table.
 *   - Executable_NumReplicas / NumPartitions: 1 (engine.Executable refuses other programs).
 *   - Executable_NumOutputs: read from the executable's record (struct exe_record), which
 *     Python makes the handle of every executable; forwarded if the handle is not one.
 *   - Buffer_Device / Buffer_Memory / Memory_Kind: the one device and memory Python registers
 *     (xlair_shim_set_device) while exactly one client with one device exists in the
 *     process; forwarded when none is registered or for another memory.
 *   - Buffer_IsDeleted / Buffer_ReadyEvent: while no buffer is deleted (Python counts the
 *     deleted buffers not yet destroyed: xlair_shim_buffers_deleted), every buffer is live:
 *     not deleted, and ready with READY_EVENT.  Otherwise forwarded.
 *
 *
 * Made here through Python's C API, else read here and run by Python:
 *   - LoadedExecutable_Execute and Buffer_Destroy, the two calls of every execution that
 *     have work for Python.  In the steady state both are made here: Execute from the call
 *     path's `resident` tuple (run_in_c, call_resident), Destroy by dropping the handle.
 *     Otherwise their argument structs are read here and Python's function (api.py
 *     `_execute_from_c`, `_destroy_buffer`, registered by xlair_shim_set_python) is called
 *     with plain integers, without a ctypes thunk and without ctypes reading the structs
 *     (docs/pjrt.md, "Measured overhead").  Forwarded to the inner table while none is
 *     registered, once the interpreter is finalizing (the inner entries answer then without
 *     running the plugin's code), or when the call into Python fails.
 *
 * The floating-point mode: jaxlib calls PJRT with the calling thread's denormals flushed (its
 * x86 MXCSR with FTZ and DAZ set), and the plugin's work runs in that thread: IREE's inline
 * calls, numpy's conversions of constants when a module is imported: a bf16 constant 2^-133
 * became 0 (JAX's lax_numpy_operators_test testSpacingSubnormals).  (Arithmetic on subnormals
 * in the compiled code is the code's own, as on XLA:CPU: F32 1e-39 * 1.5 is 0 on both.)  So
 * every call that enters the plugin's code (each slot forwarded
 * to the inner table, Execute made here) runs with flushing off and the caller's mode given
 * back after it (fp_enter, fp_leave), as XLA's compiler does (ScopedDontFlushDenormal).
 *
 * Nothing here takes a lock or calls Python while holding anything: jaxlib calls PJRT with
 * or without the GIL, the calls into Python take it (PyGILState_Ensure), and keep an
 * exception JAX may have pending when it calls (PyErr_Fetch / PyErr_Restore).  The shared
 * state is pointers and a counter, read with atomic loads.  The other calls answered here
 * are also safe while the interpreter finalizes (they run no Python).
 *
 * Built against the headers of the Python that loads it (the Makefile asks the interpreter's
 * sysconfig); shim.py checks the version it was built for.  Not linked with libpython: the
 * Python C API's symbols are the process's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the interface version shim.py checks: change it with any exported function's signature or
   struct exe_record */
#define SHIM_ABI 2

typedef struct PJRT_Error PJRT_Error;
typedef PJRT_Error *(*entry_fn)(void *args);
typedef void (*void_entry_fn)(void *args);      /* PJRT_Error_Destroy's (kept as an entry_fn) */

/* PJRT_Api: struct_size, extension_start, PJRT_Api_Version, then the function pointers in the
   header's order (abi.FUNCTIONS) and, in xlair's table, null spare slots (abi.SPARE_SLOTS). */
typedef struct {
    size_t struct_size;
    void *extension_start;
    struct {
        size_t struct_size;
        void *extension_start;
        int major_version, minor_version;
    } pjrt_api_version;
    entry_fn fn[];
} api_t;

/* every argument struct starts with this header */
#define HEADER size_t struct_size; void *extension_start

/* the argument structs of the calls answered here (pjrt_c_api.h; abi.ARGS) */
typedef struct { HEADER; PJRT_Error *error; } error_destroy_args;
typedef struct { HEADER; void *event; } event_args;            /* Destroy, Error, Await */
typedef struct { HEADER; void *event; bool is_ready; } event_is_ready_args;
typedef struct {
    HEADER;
    void *event;
    void (*callback)(PJRT_Error *error, void *user_arg);
    void *user_arg;
} event_on_ready_args;
typedef struct { HEADER; void *executable; size_t n; } executable_count_args;
typedef struct { HEADER; void *buffer; void *out; } buffer_handle_args;  /* Device, Memory, ReadyEvent */
typedef struct { HEADER; void *buffer; bool is_deleted; } buffer_is_deleted_args;
typedef struct { HEADER; void *memory; const char *kind; size_t kind_size; } memory_kind_args;
typedef struct {
    HEADER;
    void *executable;
    void *options;
    void *const *const *argument_lists;      /* [num_devices][num_args] */
    size_t num_devices;
    size_t num_args;
    void **const *output_lists;              /* [num_devices][num_outputs] */
    void **device_complete_events;           /* [num_devices], or NULL */
    void *execute_device;
} execute_args;
typedef struct { HEADER; void *buffer; } buffer_destroy_args;

/* What a PJRT_Executable / PJRT_LoadedExecutable handle points to (Python's shim.ExeRecord,
   kept alive by the executable until its Destroy). */
#define EXE_MAGIC 0x786c616972657865ULL      /* "xlairexe" */
struct exe_record {
    uint64_t magic;
    uint64_t num_outputs;
};

/* ---- state --------------------------------------------------------------------------- */

/* The one ready event: its address is the handle (distinct from every Python object's). */
static char READY_EVENT;

/* The registered device and memory (NULL: none, forward) and the memory's kind. */
static void *one_device, *one_memory;
static const char *one_kind;
static size_t one_kind_size;

/* Buffers deleted (PJRT_Buffer_Delete) and not yet destroyed. */
static long deleted_buffers;

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/* The inner table's entries for the calls answered here (set by xlair_shim_make). */
static entry_fn inner_error_destroy, inner_event_destroy, inner_event_is_ready, inner_event_error, inner_event_await,
    inner_event_on_ready, inner_num_outputs, inner_buffer_device, inner_buffer_memory,
    inner_memory_kind, inner_buffer_is_deleted, inner_buffer_ready_event, inner_execute,
    inner_buffer_destroy;

/* Python's functions for Execute and Buffer_Destroy (NULL: forward), the plugin's handles
   (api._live: handle -> object) and the types of its executables and buffers (engine.py):
   strong references, never released (JAX may call at exit; the finalizing check comes
   first). */
static PyObject *py_execute, *py_destroy, *py_live, *py_exe_type, *py_buffer_type;
static PyObject *str_for_c, *str_quick, *str_array, *str_resident, *str_dtype, *str_target,
    *str_bv, *str_shape, *str_push_ref, *str_acquire, *str_release, *str_get_as_object;
/* XLAIR_PJRT_TRACE: the calls made here say so on stderr, as api.py's entries do */
static int trace;

#if PY_VERSION_HEX >= 0x030D0000
#define FINALIZING() Py_IsFinalizing()
#else
#define FINALIZING() _Py_IsFinalizing()
#endif

/* ---- the calls ----------------------------------------------------------------------- */

/* (returns nothing: the table's slot is called as a void function) */
static void error_destroy(void *p) {
    error_destroy_args *a = p;
    if (a->error != NULL)
        ((void_entry_fn)inner_error_destroy)(p);
}

static PJRT_Error *event_destroy(void *p) {
    event_args *a = p;
    return a->event == &READY_EVENT ? NULL : inner_event_destroy(p);
}

static PJRT_Error *event_is_ready(void *p) {
    event_is_ready_args *a = p;
    if (a->event != &READY_EVENT)
        return inner_event_is_ready(p);
    a->is_ready = true;
    return NULL;
}

static PJRT_Error *event_error(void *p) {
    event_args *a = p;
    return a->event == &READY_EVENT ? NULL : inner_event_error(p);
}

static PJRT_Error *event_await(void *p) {
    event_args *a = p;
    return a->event == &READY_EVENT ? NULL : inner_event_await(p);
}

static PJRT_Error *event_on_ready(void *p) {
    event_on_ready_args *a = p;
    if (a->event != &READY_EVENT)
        return inner_event_on_ready(p);
    a->callback(NULL, a->user_arg);      /* ready, without error: the callback runs now */
    return NULL;
}

static PJRT_Error *num_replicas_or_partitions(void *p) {
    ((executable_count_args *)p)->n = 1;
    return NULL;
}

static PJRT_Error *num_outputs(void *p) {
    executable_count_args *a = p;
    const struct exe_record *r = a->executable;
    if (r == NULL || r->magic != EXE_MAGIC)
        return inner_num_outputs(p);
    a->n = r->num_outputs;
    return NULL;
}

/* A buffer's device or memory: the registered one, or the inner table's answer without one. */
static PJRT_Error *buffer_handle(void *p, void *registered, entry_fn inner) {
    if (registered == NULL)
        return inner(p);
    ((buffer_handle_args *)p)->out = registered;
    return NULL;
}

static PJRT_Error *buffer_device(void *p) {
    return buffer_handle(p, LOAD(one_device), inner_buffer_device);
}

static PJRT_Error *buffer_memory(void *p) {
    return buffer_handle(p, LOAD(one_memory), inner_buffer_memory);
}

static PJRT_Error *memory_kind(void *p) {
    memory_kind_args *a = p;
    if (a->memory == NULL || a->memory != LOAD(one_memory))
        return inner_memory_kind(p);
    a->kind = one_kind;
    a->kind_size = one_kind_size;
    return NULL;
}

static PJRT_Error *buffer_is_deleted(void *p) {
    buffer_is_deleted_args *a = p;
    if (LOAD(deleted_buffers) != 0)
        return inner_buffer_is_deleted(p);
    a->is_deleted = false;
    return NULL;
}

static PJRT_Error *buffer_ready_event(void *p) {
    buffer_handle_args *a = p;
    if (LOAD(deleted_buffers) != 0)      /* a deleted buffer's event carries an error */
        return inner_buffer_ready_event(p);
    a->out = &READY_EVENT;
    return NULL;
}

/* ---- the floating-point mode of the plugin's calls (see the top) ---------------------- */

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
typedef unsigned int fp_mode;
#define FP_FLUSH 0x8040u                        /* MXCSR: FTZ (bit 15), DAZ (bit 6) */
static inline fp_mode fp_get(void) { return _mm_getcsr(); }
static inline void fp_set(fp_mode m) { _mm_setcsr(m); }
#elif defined(__aarch64__)
typedef uint64_t fp_mode;
#define FP_FLUSH ((1ull << 24) | (1ull << 19))  /* FPCR: FZ, FZ16 */
static inline fp_mode fp_get(void) { fp_mode m; __asm__ volatile("mrs %0, fpcr" : "=r"(m)); return m; }
static inline void fp_set(fp_mode m) { __asm__ volatile("msr fpcr, %0" : : "r"(m)); }
#else
typedef unsigned int fp_mode;
#define FP_FLUSH 0u
static inline fp_mode fp_get(void) { return 0; }
static inline void fp_set(fp_mode m) { (void)m; }
#endif

/* Flushing of denormals turned off; the caller's mode, for fp_leave. */
static inline fp_mode fp_enter(void) {
    fp_mode m = fp_get();
    if (m & FP_FLUSH)
        fp_set(m & ~(fp_mode)FP_FLUSH);
    return m;
}

static inline void fp_leave(fp_mode m) {
    if (m & FP_FLUSH)
        fp_set(m);
}

/* The inner table's entries of the slots forwarded through a trampoline (FORWARDED[k] for
   slot k), and the trampolines: slot k's entry called with flushing off. */
#define MAX_FORWARDED 256
static entry_fn FORWARDED[MAX_FORWARDED];

static inline PJRT_Error *forwarded_call(size_t k, void *args) {
    fp_mode m = fp_enter();
    PJRT_Error *e = FORWARDED[k](args);
    fp_leave(m);
    return e;
}

#define TRAMPOLINE(h, l) static PJRT_Error *fwd_##h##l(void *args) { return forwarded_call(0x##h##l, args); }
#define TRAMPOLINES(h) TRAMPOLINE(h, 0) TRAMPOLINE(h, 1) TRAMPOLINE(h, 2) TRAMPOLINE(h, 3) \
    TRAMPOLINE(h, 4) TRAMPOLINE(h, 5) TRAMPOLINE(h, 6) TRAMPOLINE(h, 7) TRAMPOLINE(h, 8) TRAMPOLINE(h, 9) \
    TRAMPOLINE(h, a) TRAMPOLINE(h, b) TRAMPOLINE(h, c) TRAMPOLINE(h, d) TRAMPOLINE(h, e) TRAMPOLINE(h, f)
TRAMPOLINES(0) TRAMPOLINES(1) TRAMPOLINES(2) TRAMPOLINES(3) TRAMPOLINES(4) TRAMPOLINES(5) TRAMPOLINES(6)
TRAMPOLINES(7) TRAMPOLINES(8) TRAMPOLINES(9) TRAMPOLINES(a) TRAMPOLINES(b) TRAMPOLINES(c) TRAMPOLINES(d)
TRAMPOLINES(e) TRAMPOLINES(f)
#define ENTRY(h, l) fwd_##h##l,
#define ENTRIES(h) ENTRY(h, 0) ENTRY(h, 1) ENTRY(h, 2) ENTRY(h, 3) ENTRY(h, 4) ENTRY(h, 5) ENTRY(h, 6) \
    ENTRY(h, 7) ENTRY(h, 8) ENTRY(h, 9) ENTRY(h, a) ENTRY(h, b) ENTRY(h, c) ENTRY(h, d) ENTRY(h, e) ENTRY(h, f)
static const entry_fn TRAMPOLINE_OF[MAX_FORWARDED] = {
    ENTRIES(0) ENTRIES(1) ENTRIES(2) ENTRIES(3) ENTRIES(4) ENTRIES(5) ENTRIES(6) ENTRIES(7)
    ENTRIES(8) ENTRIES(9) ENTRIES(a) ENTRIES(b) ENTRIES(c) ENTRIES(d) ENTRIES(e) ENTRIES(f)};

/* the slots whose functions return nothing (not forwarded through a trampoline; they run
   no float code) */
static const char *const VOID_SLOTS[] = {"PJRT_Error_Destroy", "PJRT_Error_Message"};

/* ---- the calls read here and run by Python ------------------------------------------ */

/* `fn(argv...)` with the GIL taken and a pending exception of the caller's kept; a new
   reference, or NULL (the call failed: its exception cleared).  Steals argv's references. */
static PyObject *call_python(PyObject *fn, PyObject **argv, size_t n) {
    PyObject *type, *value, *traceback, *r = NULL;
    PyErr_Fetch(&type, &value, &traceback);
    bool made = true;
    for (size_t i = 0; i < n; i++)
        made = made && argv[i] != NULL;
    if (made)
        r = PyObject_Vectorcall(fn, argv, n, NULL);
    for (size_t i = 0; i < n; i++)
        Py_XDECREF(argv[i]);
    if (r == NULL)
        PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return r;
}

/* The object behind a handle (borrowed), if it is one of the plugin's of exactly `type`. */
static PyObject *live_object(void *handle, PyObject *type) {
    PyObject *key = PyLong_FromVoidPtr(handle);
    if (key == NULL)
        return NULL;
    PyObject *obj = PyDict_GetItemWithError(py_live, key);
    Py_DECREF(key);
    return obj != NULL && (PyObject *)Py_TYPE(obj) == type ? obj : NULL;
}

/* The positions of a call path's `resident` tuple (runtime.RESIDENT). */
enum { R_NEW_LIST, R_INVOKE, R_FN, R_LOCK, R_INS, R_TARGET, R_OUTS, R_ARRAY, R_VIEW, R_DEVICE, R_SIZE };

/* `self.name(args...)`: a new reference, or NULL with an exception. */
#define METHOD(name, ...) \
    PyObject_VectorcallMethod((name), (PyObject *[]){__VA_ARGS__}, \
                              sizeof((PyObject *[]){__VA_ARGS__}) / sizeof(PyObject *) | \
                                  PY_VECTORCALL_ARGUMENTS_OFFSET, NULL)

/* An attribute of an object (a borrowed reference: the object holds it), or NULL with an
   exception. */
static PyObject *attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    Py_XDECREF(v);          /* (the object's slot keeps it) */
    return v;
}

/* The call of runtime._call_path's closure on device-resident Arrays, made from its
   `resident` tuple (runtime.RESIDENT) as the closure's resident loop makes it, without its
   bytecode: the arguments' buffers pushed, the entry point invoked under the call's lock,
   each result an Array of its buffer.  A new list of the result Arrays; or NULL with
   `*declined` (an argument is not such an Array, or the tuple is not one: the closure makes
   the call) or without (IREE failed, or Python did: the caller's general path makes it
   again, as when the closure returns IREE_FAILED).  Needs the GIL. */
static PyObject *call_resident(PyObject *spec, PyObject *arrays, bool *declined) {
    *declined = true;
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != R_SIZE)
        return NULL;
#define R(i) PyTuple_GET_ITEM(spec, (i))
    PyObject *ins = R(R_INS), *outs = R(R_OUTS), *target = R(R_TARGET), *array_type = R(R_ARRAY);
    Py_ssize_t n = PyList_GET_SIZE(arrays);
    if (!PyTuple_CheckExact(ins) || PyTuple_GET_SIZE(ins) != n || !PyTuple_CheckExact(outs))
        return NULL;
    PyObject *args = NULL, *results = NULL, *out = NULL;
    PyObject *count = PyLong_FromSsize_t(n);
    args = count == NULL ? NULL : PyObject_CallOneArg(R(R_NEW_LIST), count);
    Py_XDECREF(count);
    for (Py_ssize_t i = 0; args != NULL && i < n; i++) {
        PyObject *a = PyList_GET_ITEM(arrays, i), *want = PyTuple_GET_ITEM(ins, i), *bv, *shape;
        if ((PyObject *)Py_TYPE(a) != array_type || !PyTuple_CheckExact(want) ||
            PyTuple_GET_SIZE(want) != 2 || attr(a, str_dtype) != PyTuple_GET_ITEM(want, 1) ||
            attr(a, str_target) != target || (bv = attr(a, str_bv)) == NULL || bv == Py_None ||
            (shape = attr(a, str_shape)) == NULL ||
            PyObject_RichCompareBool(shape, PyTuple_GET_ITEM(want, 0), Py_EQ) != 1)
            goto out;
        PyObject *pushed = METHOD(str_push_ref, args, bv);
        if (pushed == NULL)
            goto out;
        Py_DECREF(pushed);
    }
    if (args == NULL)
        goto out;
    *declined = false;
    Py_ssize_t m = PyTuple_GET_SIZE(outs);
    count = PyLong_FromSsize_t(m);
    results = count == NULL ? NULL : PyObject_CallOneArg(R(R_NEW_LIST), count);
    Py_XDECREF(count);
    if (results == NULL)
        goto out;
    PyObject *lock = R(R_LOCK), *held = METHOD(str_acquire, lock);
    if (held == NULL)
        goto out;
    Py_DECREF(held);
    PyObject *invoked = PyObject_Vectorcall(R(R_INVOKE), (PyObject *[]){R(R_FN), args, results}, 3, NULL);
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);        /* (invoke's error, kept over the release) */
    PyObject *released = METHOD(str_release, lock);
    Py_XDECREF(released);
    PyErr_Restore(type, value, traceback);
    if (invoked == NULL || released == NULL)
        goto out;
    Py_DECREF(invoked);
    if (PyObject_Length(results) != m)
        goto out;
    out = PyList_New(m);
    for (Py_ssize_t i = 0; out != NULL && i < m; i++) {
        PyObject *kind = PyTuple_GET_ITEM(outs, i), *index = PyLong_FromSsize_t(i), *bv = NULL, *made = NULL;
        if (index != NULL && PyTuple_CheckExact(kind) && PyTuple_GET_SIZE(kind) == 3)
            bv = METHOD(str_get_as_object, results, index, R(R_VIEW));
        if (bv != NULL)
            made = PyObject_Vectorcall(array_type, (PyObject *[]){bv, PyTuple_GET_ITEM(kind, 0),
                                       R(R_DEVICE), target, PyTuple_GET_ITEM(kind, 1),
                                       PyTuple_GET_ITEM(kind, 2)}, 6, NULL);
        Py_XDECREF(index);
        Py_XDECREF(bv);
        if (made == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, made);
    }
#undef R
out:
    Py_XDECREF(results);
    Py_XDECREF(args);
    return out;
}

/* The steady state's Execute, made here: the arguments' arrays handed to the program's call
   path (runtime._call_path's closure, `_quick`: its `resident` tuple by call_resident, else
   the closure itself), its results made buffers (engine.Buffer) and
   registered as handles, as api._execute does.  True when done; false when anything is not
   as usual (an argument that is not a live buffer, a count, a device, a deleted executable,
   the call path declining or failing): Python then makes the whole call, its errors
   included (a program the call path failed on runs again there, as runtime.call_leaves
   runs it again by its general path).  Needs the GIL. */
static bool run_in_c(execute_args *a) {
    if (a->num_devices != 1 || a->argument_lists == NULL || a->output_lists == NULL ||
        a->output_lists[0] == NULL)
        return false;
    PyObject *exe = live_object(a->executable, py_exe_type);
    if (exe == NULL)
        return false;
    bool done = false;
    PyObject *arrays = NULL, *results = NULL, *made = NULL;
    PyObject *for_c = PyObject_GetAttr(exe, str_for_c);     /* (program, argument count, device) */
    if (for_c == NULL || !PyTuple_CheckExact(for_c) || PyTuple_GET_SIZE(for_c) != 3)
        goto out;
    PyObject *device = PyTuple_GET_ITEM(for_c, 2);
    if (PyLong_AsSize_t(PyTuple_GET_ITEM(for_c, 1)) != a->num_args ||
        (a->execute_device != NULL && a->execute_device != (void *)device))
        goto out;
    PyObject *quick = PyObject_GetAttr(PyTuple_GET_ITEM(for_c, 0), str_quick);
    if (quick == NULL || quick == Py_None) {
        Py_XDECREF(quick);
        goto out;
    }
    arrays = PyList_New((Py_ssize_t)a->num_args);
    for (size_t i = 0; arrays != NULL && i < a->num_args; i++) {
        PyObject *b = live_object(a->argument_lists[0][i], py_buffer_type);
        PyObject *array = b == NULL ? NULL : PyObject_GetAttr(b, str_array);
        if (array == NULL || array == Py_None) {       /* not a buffer, or a deleted one */
            Py_XDECREF(array);
            Py_CLEAR(arrays);
            break;
        }
        PyList_SET_ITEM(arrays, (Py_ssize_t)i, array);
    }
    if (arrays != NULL) {
        bool declined = true;
        PyObject *spec = PyObject_GetAttr(quick, str_resident);
        if (spec != NULL && spec != Py_None)
            results = call_resident(spec, arrays, &declined);
        Py_XDECREF(spec);
        PyErr_Clear();
        if (declined)
            results = PyObject_CallOneArg(quick, arrays);
    }
    Py_DECREF(quick);
    if (results == NULL || !PyList_CheckExact(results))
        goto out;
    Py_ssize_t m = PyList_GET_SIZE(results);
    made = PyList_New(m);
    for (Py_ssize_t i = 0; made != NULL && i < m; i++) {
        PyObject *argv[2] = {PyList_GET_ITEM(results, i), device};
        PyObject *buffer = PyObject_Vectorcall(py_buffer_type, argv, 2, NULL);
        if (buffer == NULL)
            Py_CLEAR(made);
        else
            PyList_SET_ITEM(made, i, buffer);
    }
    if (made == NULL)
        goto out;
    for (Py_ssize_t i = 0; i < m; i++) {       /* registered: api._h */
        PyObject *buffer = PyList_GET_ITEM(made, i);
        PyObject *key = PyLong_FromVoidPtr(buffer);
        if (key == NULL || PyDict_SetItem(py_live, key, buffer) != 0) {
            Py_XDECREF(key);
            for (Py_ssize_t j = 0; j < i; j++) {   /* (undone: Python makes the call) */
                PyObject *k = PyLong_FromVoidPtr(PyList_GET_ITEM(made, j));
                if (k != NULL && PyDict_DelItem(py_live, k) != 0)
                    PyErr_Clear();
                Py_XDECREF(k);
            }
            goto out;
        }
        Py_DECREF(key);
    }
    for (Py_ssize_t i = 0; i < m; i++)
        a->output_lists[0][i] = PyList_GET_ITEM(made, i);
    if (a->device_complete_events != NULL)
        a->device_complete_events[0] = &READY_EVENT;
    done = true;
out:
    if (!done)
        PyErr_Clear();
    Py_XDECREF(made);
    Py_XDECREF(results);
    Py_XDECREF(arrays);
    Py_XDECREF(for_c);
    return done;
}

/* Execute: made here (run_in_c) in the steady state; else Python's `_execute_from_c(
   executable, execute_device, num_devices, argument handles, output list given)` makes it
   and returns the result buffers' handles (a list of ints) or the handle of the error it made
   (an int). */
static PJRT_Error *execute(void *p) {
    execute_args *a = p;
    PyObject *fn = LOAD(py_execute);
    if (fn == NULL || FINALIZING())
        return inner_execute(p);
    fp_mode mode = fp_enter();
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);          /* (a pending exception of the caller's) */
    bool done = run_in_c(a);
    PyErr_Restore(type, value, traceback);
    if (done) {
        PyGILState_Release(gil);
        fp_leave(mode);
        if (trace)
            fprintf(stderr, "xlair pjrt: PJRT_LoadedExecutable_Execute (made in C)\n");
        return NULL;
    }
    size_t n = a->num_devices == 1 && a->argument_lists != NULL ? a->num_args : 0;
    bool outputs_given = a->num_devices == 1 && a->output_lists != NULL && a->output_lists[0] != NULL;
    PyObject *handles = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; handles != NULL && i < n; i++) {
        PyObject *h = PyLong_FromVoidPtr(a->argument_lists[0][i]);
        if (h == NULL) {
            Py_CLEAR(handles);
            break;
        }
        PyTuple_SET_ITEM(handles, (Py_ssize_t)i, h);
    }
    PyObject *argv[5] = {PyLong_FromVoidPtr(a->executable), PyLong_FromVoidPtr(a->execute_device),
                         PyLong_FromSize_t(a->num_devices), handles, PyBool_FromLong(outputs_given)};
    PyObject *r = call_python(fn, argv, 5);
    PJRT_Error *error = NULL;
    bool forward = r == NULL;
    if (r != NULL && PyList_CheckExact(r)) {
        Py_ssize_t m = PyList_GET_SIZE(r);
        for (Py_ssize_t i = 0; i < m; i++)      /* (Python checked the list is given) */
            a->output_lists[0][i] = PyLong_AsVoidPtr(PyList_GET_ITEM(r, i));
        if (a->device_complete_events != NULL)
            a->device_complete_events[0] = &READY_EVENT;
    } else if (r != NULL && PyLong_CheckExact(r)) {
        error = PyLong_AsVoidPtr(r);
    } else {
        forward = true;
    }
    Py_XDECREF(r);
    PyGILState_Release(gil);
    if (forward)
        error = inner_execute(p);
    fp_leave(mode);
    return error;
}

/* Buffer_Destroy, made here as api._destroy_buffer makes it: the handle dropped from the
   plugin's handles, and a deleted buffer's destroy counted.  Python's `_destroy_buffer`
   makes it when this fails; a destroy never fails. */
static PJRT_Error *buffer_destroy(void *p) {
    buffer_destroy_args *a = p;
    PyObject *fn = LOAD(py_destroy);
    if (fn == NULL || FINALIZING())
        return inner_buffer_destroy(p);
    if (a->buffer == NULL)
        return NULL;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *key = PyLong_FromVoidPtr(a->buffer);
    PyObject *obj = key == NULL ? NULL : PyDict_GetItemWithError(py_live, key);
    bool done = key != NULL && !PyErr_Occurred();
    if (obj != NULL && (PyObject *)Py_TYPE(obj) == py_buffer_type) {
        PyObject *array = PyObject_GetAttr(obj, str_array);
        done = array != NULL;
        if (array == Py_None)
            __atomic_add_fetch(&deleted_buffers, -1, __ATOMIC_ACQ_REL);
        Py_XDECREF(array);
    }
    if (done && obj != NULL)
        done = PyDict_DelItem(py_live, key) == 0;
    Py_XDECREF(key);
    if (!done) {
        PyErr_Clear();
        PyObject *argv[1] = {PyLong_FromVoidPtr(a->buffer)};
        Py_XDECREF(call_python(fn, argv, 1));
    }
    PyErr_Restore(type, value, traceback);
    PyGILState_Release(gil);
    return NULL;
}

/* The slots answered here, by the header's names; `inner` receives the inner table's entry. */
static const struct {
    const char *name;
    entry_fn fn;
    entry_fn *inner;
} ANSWERS[] = {
    {"PJRT_Error_Destroy", (entry_fn)error_destroy, &inner_error_destroy},
    {"PJRT_Event_Destroy", event_destroy, &inner_event_destroy},
    {"PJRT_Event_IsReady", event_is_ready, &inner_event_is_ready},
    {"PJRT_Event_Error", event_error, &inner_event_error},
    {"PJRT_Event_Await", event_await, &inner_event_await},
    {"PJRT_Event_OnReady", event_on_ready, &inner_event_on_ready},
    {"PJRT_Executable_NumReplicas", num_replicas_or_partitions, NULL},
    {"PJRT_Executable_NumPartitions", num_replicas_or_partitions, NULL},
    {"PJRT_Executable_NumOutputs", num_outputs, &inner_num_outputs},
    {"PJRT_Buffer_Device", buffer_device, &inner_buffer_device},
    {"PJRT_Buffer_Memory", buffer_memory, &inner_buffer_memory},
    {"PJRT_Memory_Kind", memory_kind, &inner_memory_kind},
    {"PJRT_Buffer_IsDeleted", buffer_is_deleted, &inner_buffer_is_deleted},
    {"PJRT_Buffer_ReadyEvent", buffer_ready_event, &inner_buffer_ready_event},
    {"PJRT_LoadedExecutable_Execute", execute, &inner_execute},
    {"PJRT_Buffer_Destroy", buffer_destroy, &inner_buffer_destroy},
};

/* ---- the interface shim.py uses -------------------------------------------------------- */

int xlair_shim_abi(void) { return SHIM_ABI; }

uint64_t xlair_shim_exe_magic(void) { return EXE_MAGIC; }

/* The Python version (PY_VERSION_HEX) whose headers built this library. */
unsigned long xlair_shim_python_version(void) { return PY_VERSION_HEX; }

/* Python's functions for Execute and Buffer_Destroy, the handles' dict, the executable
   and buffer types (above) and whether to trace; called once, with the GIL held (ctypes.PyDLL).  Returns 0, or -1
   when already set or on failure. */
int xlair_shim_set_python(PyObject *execute_fn, PyObject *destroy_fn, PyObject *live,
                          PyObject *exe_type, PyObject *buffer_type, int trace_calls) {
    if (py_execute != NULL || !PyDict_CheckExact(live) || !PyType_Check(exe_type) ||
        !PyType_Check(buffer_type))
        return -1;
    struct { PyObject **s; const char *text; } names[] = {
        {&str_for_c, "_for_c"}, {&str_quick, "_quick"}, {&str_array, "array"},
        {&str_resident, "resident"}, {&str_dtype, "dtype"}, {&str_target, "_target"},
        {&str_bv, "_bv"}, {&str_shape, "shape"}, {&str_push_ref, "push_ref"},
        {&str_acquire, "acquire"}, {&str_release, "release"}, {&str_get_as_object, "get_as_object"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((*names[i].s = PyUnicode_InternFromString(names[i].text)) == NULL)
            return -1;
    PyObject *keep[] = {execute_fn, destroy_fn, live, exe_type, buffer_type};
    for (size_t i = 0; i < 5; i++)
        Py_INCREF(keep[i]);
    trace = trace_calls;
    py_live = live;
    py_exe_type = exe_type;
    py_buffer_type = buffer_type;
    STORE(py_destroy, destroy_fn);
    STORE(py_execute, execute_fn);
    return 0;
}

void *xlair_shim_ready_event(void) { return &READY_EVENT; }

/* The table: a copy of `inner` (`table_bytes` long: the header, the `n_names` function
   pointers named by `names` in order, the spare slots) with the calls above answered here.
   Made once and never freed (JAX holds it for the process's life).  NULL when a name above
   is not among `names` or the table is too short for them. */
void *xlair_shim_make(const api_t *inner, size_t table_bytes, const char *const *names,
                      size_t n_names) {
    static api_t *made;
    if (made != NULL)
        return made;
    if (table_bytes < offsetof(api_t, fn) + n_names * sizeof(entry_fn))
        return NULL;
    api_t *table = malloc(table_bytes);
    if (table == NULL)
        return NULL;
    memcpy(table, inner, table_bytes);
    for (size_t i = 0; i < n_names && i < MAX_FORWARDED; i++) {
        bool returns = inner->fn[i] != NULL;
        for (size_t v = 0; v < sizeof VOID_SLOTS / sizeof VOID_SLOTS[0]; v++)
            returns = returns && strcmp(names[i], VOID_SLOTS[v]) != 0;
        if (returns) {
            FORWARDED[i] = inner->fn[i];
            table->fn[i] = TRAMPOLINE_OF[i];
        }
    }
    for (size_t k = 0; k < sizeof ANSWERS / sizeof ANSWERS[0]; k++) {
        size_t i = 0;
        while (i < n_names && strcmp(names[i], ANSWERS[k].name) != 0)
            i++;
        if (i == n_names) {
            free(table);
            return NULL;
        }
        if (ANSWERS[k].inner != NULL)
            *ANSWERS[k].inner = inner->fn[i];
        table->fn[i] = ANSWERS[k].fn;
    }
    made = table;
    return made;
}

/* The device and memory every buffer has (the process's one client has one device), and the
   memory's kind (kept alive by the caller); NULLs: forward those calls to Python. */
void xlair_shim_set_device(void *device, void *memory, const char *kind, size_t kind_size) {
    one_kind = kind;
    one_kind_size = kind_size;
    STORE(one_memory, memory);
    STORE(one_device, device);
}

/* Python's count of deleted, not yet destroyed buffers changed by `delta` (+1 at a delete,
   -1 at the destroy of a deleted buffer). */
void xlair_shim_buffers_deleted(long delta) {
    __atomic_add_fetch(&deleted_buffers, delta, __ATOMIC_ACQ_REL);
}
