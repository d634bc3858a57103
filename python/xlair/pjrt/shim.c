/* The C fast path of xlair's PJRT plugin (docs/pjrt.md, "The C shim").
 *
 * The plugin's PJRT_Api table is built from Python (api.py: one ctypes callback per call).
 * JAX makes ~15 PJRT calls around each execution, most of them with a fixed answer, and each
 * callback into Python costs ~0.5 us before its body runs.  This library takes that table
 * (the "inner" one) and makes a copy of it in which those fixed-answer calls are answered
 * here, in C, without entering Python; every other slot is the inner table's function
 * pointer, copied.  Loaded with ctypes by shim.py (no Python.h); built by the Makefile.
 *
 * Answered here:
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
 * Nothing here takes a lock or calls Python while holding anything: jaxlib calls PJRT with
 * the GIL held, and the inner table's entries take the GIL themselves.  The shared state is
 * two pointers and a counter, read with atomic loads.  The calls answered here are also safe
 * while the interpreter finalizes (they run no Python).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the interface version shim.py checks: change it with any exported function's signature or
   struct exe_record */
#define SHIM_ABI 1

typedef struct PJRT_Error PJRT_Error;
typedef PJRT_Error *(*entry_fn)(void *args);

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
static entry_fn inner_event_destroy, inner_event_is_ready, inner_event_error, inner_event_await,
    inner_event_on_ready, inner_num_outputs, inner_buffer_device, inner_buffer_memory,
    inner_memory_kind, inner_buffer_is_deleted, inner_buffer_ready_event;

/* ---- the calls ----------------------------------------------------------------------- */

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

/* The slots answered here, by the header's names; `inner` receives the inner table's entry. */
static const struct {
    const char *name;
    entry_fn fn;
    entry_fn *inner;
} ANSWERS[] = {
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
};

/* ---- the interface shim.py uses -------------------------------------------------------- */

int xlair_shim_abi(void) { return SHIM_ABI; }

uint64_t xlair_shim_exe_magic(void) { return EXE_MAGIC; }

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
