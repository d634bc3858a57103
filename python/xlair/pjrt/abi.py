"""The PJRT C API's ABI, mirrored with ctypes: the `PJRT_Api` table's layout and the argument
structs of the calls the plugin implements.

Mirrored from openxla/xla `xla/pjrt/c/pjrt_c_api.h` at PJRT_API_MAJOR 0, PJRT_API_MINOR 94
(commit 0882740a8496c82a8dc8a25fadba88ca342fb0aa).  jaxlib 0.10.2's framework is at 0.112 and
takes any plugin from 0.29 on: it reads the plugin's version and checks it before each call
added after the plugin's minor (and `struct_size` tells each side how much of an argument
struct the other knows).  The order of `FUNCTIONS` and the fields of each struct are ABI facts:
change them only against the header.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_bool, c_int, c_int64, c_size_t, c_void_p

API_MAJOR, API_MINOR = 0, 94

#: the PJRT_Api's function pointers, in the header's order
FUNCTIONS = (
    "PJRT_Error_Destroy", "PJRT_Error_Message", "PJRT_Error_GetCode",
    "PJRT_Plugin_Initialize", "PJRT_Plugin_Attributes",
    "PJRT_Event_Destroy", "PJRT_Event_IsReady", "PJRT_Event_Error", "PJRT_Event_Await",
    "PJRT_Event_OnReady",
    "PJRT_Client_Create", "PJRT_Client_Destroy", "PJRT_Client_PlatformName",
    "PJRT_Client_ProcessIndex", "PJRT_Client_PlatformVersion", "PJRT_Client_Devices",
    "PJRT_Client_AddressableDevices", "PJRT_Client_LookupDevice",
    "PJRT_Client_LookupAddressableDevice", "PJRT_Client_AddressableMemories",
    "PJRT_Client_Compile", "PJRT_Client_DefaultDeviceAssignment",
    "PJRT_Client_BufferFromHostBuffer",
    "PJRT_DeviceDescription_Id", "PJRT_DeviceDescription_ProcessIndex",
    "PJRT_DeviceDescription_Attributes", "PJRT_DeviceDescription_Kind",
    "PJRT_DeviceDescription_DebugString", "PJRT_DeviceDescription_ToString",
    "PJRT_Device_GetDescription", "PJRT_Device_IsAddressable", "PJRT_Device_LocalHardwareId",
    "PJRT_Device_AddressableMemories", "PJRT_Device_DefaultMemory", "PJRT_Device_MemoryStats",
    "PJRT_Memory_Id", "PJRT_Memory_Kind", "PJRT_Memory_DebugString", "PJRT_Memory_ToString",
    "PJRT_Memory_AddressableByDevices",
    "PJRT_Executable_Destroy", "PJRT_Executable_Name", "PJRT_Executable_NumReplicas",
    "PJRT_Executable_NumPartitions", "PJRT_Executable_NumOutputs",
    "PJRT_Executable_SizeOfGeneratedCodeInBytes", "PJRT_Executable_GetCostAnalysis",
    "PJRT_Executable_OutputMemoryKinds", "PJRT_Executable_OptimizedProgram",
    "PJRT_Executable_Serialize",
    "PJRT_LoadedExecutable_Destroy", "PJRT_LoadedExecutable_GetExecutable",
    "PJRT_LoadedExecutable_AddressableDevices", "PJRT_LoadedExecutable_Delete",
    "PJRT_LoadedExecutable_IsDeleted", "PJRT_LoadedExecutable_Execute",
    "PJRT_Executable_DeserializeAndLoad", "PJRT_LoadedExecutable_Fingerprint",
    "PJRT_Buffer_Destroy", "PJRT_Buffer_ElementType", "PJRT_Buffer_Dimensions",
    "PJRT_Buffer_UnpaddedDimensions", "PJRT_Buffer_DynamicDimensionIndices",
    "PJRT_Buffer_GetMemoryLayout", "PJRT_Buffer_OnDeviceSizeInBytes", "PJRT_Buffer_Device",
    "PJRT_Buffer_Memory", "PJRT_Buffer_Delete", "PJRT_Buffer_IsDeleted",
    "PJRT_Buffer_CopyToDevice", "PJRT_Buffer_ToHostBuffer", "PJRT_Buffer_IsOnCpu",
    "PJRT_Buffer_ReadyEvent", "PJRT_Buffer_UnsafePointer",
    "PJRT_Buffer_IncreaseExternalReferenceCount", "PJRT_Buffer_DecreaseExternalReferenceCount",
    "PJRT_Buffer_OpaqueDeviceMemoryDataPointer",
    "PJRT_CopyToDeviceStream_Destroy", "PJRT_CopyToDeviceStream_AddChunk",
    "PJRT_CopyToDeviceStream_TotalBytes", "PJRT_CopyToDeviceStream_GranuleSize",
    "PJRT_CopyToDeviceStream_CurrentBytes",
    "PJRT_TopologyDescription_Create", "PJRT_TopologyDescription_Destroy",
    "PJRT_TopologyDescription_PlatformName", "PJRT_TopologyDescription_PlatformVersion",
    "PJRT_TopologyDescription_GetDeviceDescriptions", "PJRT_TopologyDescription_Serialize",
    "PJRT_TopologyDescription_Attributes",
    "PJRT_Compile",
    # (added after 0.x, in order)
    "PJRT_Executable_OutputElementTypes", "PJRT_Executable_OutputDimensions",
    "PJRT_Buffer_CopyToMemory",
    "PJRT_Client_CreateViewOfDeviceBuffer",
    "PJRT_Executable_Fingerprint",
    "PJRT_Client_TopologyDescription",
    "PJRT_Executable_GetCompiledMemoryStats",
    "PJRT_Memory_Kind_Id",
    "PJRT_ExecuteContext_Create", "PJRT_ExecuteContext_Destroy", "PJRT_Buffer_CopyRawToHost",
    "PJRT_AsyncHostToDeviceTransferManager_Destroy",
    "PJRT_AsyncHostToDeviceTransferManager_TransferData",
    "PJRT_Client_CreateBuffersForAsyncHostToDevice",
    "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer",
    "PJRT_AsyncHostToDeviceTransferManager_Device",
    "PJRT_AsyncHostToDeviceTransferManager_BufferCount",
    "PJRT_AsyncHostToDeviceTransferManager_BufferSize",
    "PJRT_AsyncHostToDeviceTransferManager_SetBufferError",
    "PJRT_AsyncHostToDeviceTransferManager_AddMetadata",
    "PJRT_Client_DmaMap", "PJRT_Client_DmaUnmap",
    "PJRT_Client_CreateUninitializedBuffer", "PJRT_Client_UpdateGlobalProcessInfo",
    "PJRT_TopologyDescription_Deserialize", "PJRT_Client_CreateAliasBuffer",
    "PJRT_Client_FulfillAliasBuffer", "PJRT_LoadedExecutable_GetDeviceAssignment",
    "PJRT_Client_CreateErrorBuffer", "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral",
    "PJRT_Buffer_CopyRawToHostFuture", "PJRT_Device_PoisonExecution",
    "PJRT_Device_CreateAsyncTrackingEvent", "PJRT_AsyncTrackingEvent_Destroy",
    "PJRT_Executable_GetCompileOptions", "PJRT_Buffer_DonateWithControlDependency",
    "PJRT_Event_Create", "PJRT_Event_Set", "PJRT_Device_GetAttributes",
)

#: the two calls that return void (every other returns a PJRT_Error*)
VOID = frozenset({"PJRT_Error_Destroy", "PJRT_Error_Message"})

#: null slots after the table: a framework newer than 0.94 that reads a later field without
#: checking the version finds NULL there, never the bytes after the table
SPARE_SLOTS = 64

# PJRT_Error_Code (absl's status codes)
CANCELLED, UNKNOWN, INVALID_ARGUMENT, NOT_FOUND = 1, 2, 3, 5
FAILED_PRECONDITION, ABORTED, UNIMPLEMENTED, INTERNAL = 9, 10, 12, 13

# PJRT_NamedValue_Type
NV_STRING, NV_INT64, NV_INT64_LIST, NV_FLOAT, NV_BOOL = range(5)

# PJRT_Buffer_MemoryLayout_Type
LAYOUT_TILED, LAYOUT_STRIDES = 0, 1

#: PJRT_Buffer_Type by numpy dtype name (the enum's order: INVALID, PRED, S8, S16, S32, S64,
#: U8, U16, U32, U64, F16, F32, F64, BF16, C64, C128, ...)
BUFFER_TYPES = {
    "bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5,
    "uint8": 6, "uint16": 7, "uint32": 8, "uint64": 9,
    "float16": 10, "float32": 11, "float64": 12, "bfloat16": 13,
    "complex64": 14, "complex128": 15,
}
DTYPE_NAMES = {v: k for k, v in BUFFER_TYPES.items()}
_ENUM_NAMES = ("INVALID", "PRED", "S8", "S16", "S32", "S64", "U8", "U16", "U32", "U64", "F16",
               "F32", "F64", "BF16", "C64", "C128", "F8E5M2", "F8E4M3FN", "F8E4M3B11FNUZ",
               "F8E5M2FNUZ", "F8E4M3FNUZ", "S4", "U4", "TOKEN", "S2", "U2", "F8E4M3", "F8E3M4",
               "F8E8M0FNU", "F4E2M1FN", "S1", "U1")


def buffer_type_name(t: int) -> str:
    return _ENUM_NAMES[t] if 0 <= t < len(_ENUM_NAMES) else f"#{t}"


def _args(name: str, *fields) -> type:
    """An argument struct: struct_size and extension_start, then `fields`."""
    return type(name, (ctypes.Structure,), {
        "_fields_": [("struct_size", c_size_t), ("extension_start", c_void_p), *fields]})


P = c_void_p
_out_str = lambda prefix: ((prefix, P), (prefix + "_size", c_size_t))      # noqa: E731


class Version(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", P),
                ("major_version", c_int), ("minor_version", c_int)]


class Api(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", P), ("pjrt_api_version", Version),
                *[(n, P) for n in FUNCTIONS], ("_spare", P * SPARE_SLOTS)]


#: sizeof up to the last function pointer (PJRT_STRUCT_SIZE(PJRT_Api, PJRT_Device_GetAttributes))
API_STRUCT_SIZE = Api._spare.offset


class _Value(ctypes.Union):
    _fields_ = [("string_value", P), ("int64_value", c_int64), ("int64_array_value", P),
                ("float_value", ctypes.c_float), ("bool_value", c_bool)]


class NamedValue(ctypes.Structure):
    _anonymous_ = ("value",)
    _fields_ = [("struct_size", c_size_t), ("extension_start", P), ("name", P),
                ("name_size", c_size_t), ("type", c_int), ("value", _Value),
                ("value_size", c_size_t)]


class Tiled(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", P), ("minor_to_major", P),
                ("minor_to_major_size", c_size_t), ("tile_dims", P), ("tile_dim_sizes", P),
                ("num_tiles", c_size_t)]


class Strides(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", P), ("byte_strides", P),
                ("num_byte_strides", c_size_t)]


class _LayoutUnion(ctypes.Union):
    _fields_ = [("tiled", Tiled), ("strides", Strides)]


class MemoryLayout(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("extension_start", P), ("u", _LayoutUnion),
                ("type", c_int)]


Program = _args("PJRT_Program", ("code", P), ("code_size", c_size_t), ("format", P),
                ("format_size", c_size_t))

#: the argument struct of each implemented call, by the call's name
ARGS = {
    "PJRT_Error_Destroy": _args("A", ("error", P)),
    "PJRT_Error_Message": _args("A", ("error", P), *_out_str("message")),
    "PJRT_Error_GetCode": _args("A", ("error", P), ("code", c_int)),
    "PJRT_Plugin_Initialize": _args("A"),
    "PJRT_Plugin_Attributes": _args("A", ("attributes", P), ("num_attributes", c_size_t)),
    "PJRT_Event_Destroy": _args("A", ("event", P)),
    "PJRT_Event_IsReady": _args("A", ("event", P), ("is_ready", c_bool)),
    "PJRT_Event_Error": _args("A", ("event", P)),
    "PJRT_Event_Await": _args("A", ("event", P)),
    "PJRT_Event_OnReady": _args("A", ("event", P), ("callback", P), ("user_arg", P)),
    "PJRT_Client_Create": _args("A", ("create_options", P), ("num_options", c_size_t),
                                ("kv_get_callback", P), ("kv_get_user_arg", P),
                                ("kv_put_callback", P), ("kv_put_user_arg", P), ("client", P),
                                ("kv_try_get_callback", P), ("kv_try_get_user_arg", P)),
    "PJRT_Client_Destroy": _args("A", ("client", P)),
    "PJRT_Client_PlatformName": _args("A", ("client", P), *_out_str("platform_name")),
    "PJRT_Client_ProcessIndex": _args("A", ("client", P), ("process_index", c_int)),
    "PJRT_Client_PlatformVersion": _args("A", ("client", P), *_out_str("platform_version")),
    "PJRT_Client_Devices": _args("A", ("client", P), ("devices", P), ("num_devices", c_size_t)),
    "PJRT_Client_AddressableDevices": _args("A", ("client", P), ("addressable_devices", P),
                                            ("num_addressable_devices", c_size_t)),
    "PJRT_Client_LookupDevice": _args("A", ("client", P), ("id", c_int), ("device", P)),
    "PJRT_Client_LookupAddressableDevice": _args("A", ("client", P), ("local_hardware_id", c_int),
                                                 ("addressable_device", P)),
    "PJRT_Client_AddressableMemories": _args("A", ("client", P), ("addressable_memories", P),
                                             ("num_addressable_memories", c_size_t)),
    "PJRT_Client_Compile": _args("A", ("client", P), ("program", P), ("compile_options", P),
                                 ("compile_options_size", c_size_t), ("executable", P)),
    "PJRT_Client_DefaultDeviceAssignment": _args("A", ("client", P), ("num_replicas", c_int),
                                                 ("num_partitions", c_int),
                                                 ("default_assignment_size", c_size_t),
                                                 ("default_assignment", P)),
    "PJRT_Client_BufferFromHostBuffer": _args(
        "A", ("client", P), ("data", P), ("type", c_int), ("dims", P), ("num_dims", c_size_t),
        ("byte_strides", P), ("num_byte_strides", c_size_t), ("host_buffer_semantics", c_int),
        ("device", P), ("memory", P), ("device_layout", P), ("done_with_host_buffer", P),
        ("buffer", P)),
    "PJRT_DeviceDescription_Id": _args("A", ("device_description", P), ("id", c_int)),
    "PJRT_DeviceDescription_ProcessIndex": _args("A", ("device_description", P),
                                                 ("process_index", c_int)),
    "PJRT_DeviceDescription_Attributes": _args("A", ("device_description", P),
                                               ("num_attributes", c_size_t), ("attributes", P)),
    "PJRT_DeviceDescription_Kind": _args("A", ("device_description", P), *_out_str("device_kind")),
    "PJRT_DeviceDescription_DebugString": _args("A", ("device_description", P),
                                                *_out_str("debug_string")),
    "PJRT_DeviceDescription_ToString": _args("A", ("device_description", P), *_out_str("to_string")),
    "PJRT_Device_GetDescription": _args("A", ("device", P), ("device_description", P)),
    "PJRT_Device_IsAddressable": _args("A", ("device", P), ("is_addressable", c_bool)),
    "PJRT_Device_LocalHardwareId": _args("A", ("device", P), ("local_hardware_id", c_int)),
    "PJRT_Device_AddressableMemories": _args("A", ("device", P), ("memories", P),
                                             ("num_memories", c_size_t)),
    "PJRT_Device_GetAttributes": _args("A", ("device", P), ("attributes", P),
                                       ("num_attributes", c_size_t), ("device_attributes", P),
                                       ("attributes_deleter", P)),
    "PJRT_Device_DefaultMemory": _args("A", ("device", P), ("memory", P)),
    "PJRT_Memory_Id": _args("A", ("memory", P), ("id", c_int)),
    "PJRT_Memory_Kind": _args("A", ("memory", P), *_out_str("kind")),
    "PJRT_Memory_Kind_Id": _args("A", ("memory", P), ("kind_id", c_int)),
    "PJRT_Memory_DebugString": _args("A", ("memory", P), *_out_str("debug_string")),
    "PJRT_Memory_ToString": _args("A", ("memory", P), *_out_str("to_string")),
    "PJRT_Memory_AddressableByDevices": _args("A", ("memory", P), ("devices", P),
                                              ("num_devices", c_size_t)),
    "PJRT_Executable_Destroy": _args("A", ("executable", P)),
    "PJRT_LoadedExecutable_Destroy": _args("A", ("executable", P)),
    "PJRT_LoadedExecutable_GetExecutable": _args("A", ("loaded_executable", P), ("executable", P)),
    "PJRT_Executable_Name": _args("A", ("executable", P), *_out_str("executable_name")),
    "PJRT_Executable_NumReplicas": _args("A", ("executable", P), ("num_replicas", c_size_t)),
    "PJRT_Executable_NumPartitions": _args("A", ("executable", P), ("num_partitions", c_size_t)),
    "PJRT_LoadedExecutable_AddressableDevices": _args("A", ("executable", P),
                                                      ("addressable_devices", P),
                                                      ("num_addressable_devices", c_size_t)),
    "PJRT_LoadedExecutable_Delete": _args("A", ("executable", P)),
    "PJRT_LoadedExecutable_IsDeleted": _args("A", ("executable", P), ("is_deleted", c_bool)),
    "PJRT_LoadedExecutable_Execute": _args(
        "A", ("executable", P), ("options", P), ("argument_lists", P), ("num_devices", c_size_t),
        ("num_args", c_size_t), ("output_lists", P), ("device_complete_events", P),
        ("execute_device", P)),
    "PJRT_LoadedExecutable_GetDeviceAssignment": _args(
        "A", ("executable", P), *_out_str("serialized_bytes"), ("serialized_device_assignment", P),
        ("serialized_device_assignment_deleter", P)),
    "PJRT_Executable_NumOutputs": _args("A", ("executable", P), ("num_outputs", c_size_t)),
    "PJRT_Executable_SizeOfGeneratedCodeInBytes": _args("A", ("executable", P),
                                                        ("size_in_bytes", c_int64)),
    "PJRT_Executable_Fingerprint": _args("A", ("executable", P),
                                         *_out_str("executable_fingerprint")),
    "PJRT_LoadedExecutable_Fingerprint": _args("A", ("executable", P),
                                               *_out_str("executable_fingerprint")),
    "PJRT_Executable_GetCostAnalysis": _args("A", ("executable", P), ("num_properties", c_size_t),
                                             ("properties", P)),
    "PJRT_Executable_GetCompiledMemoryStats": _args(
        "A", ("executable", P),
        *[(n, c_int64) for n in ("generated_code_size_in_bytes", "argument_size_in_bytes",
                                 "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
                                 "host_generated_code_size_in_bytes", "host_argument_size_in_bytes",
                                 "host_output_size_in_bytes", "host_alias_size_in_bytes",
                                 "host_temp_size_in_bytes", "peak_memory_in_bytes",
                                 "total_size_in_bytes")]),
    "PJRT_Executable_OutputElementTypes": _args("A", ("executable", P), ("output_types", P),
                                                ("num_output_types", c_size_t)),
    "PJRT_Executable_OutputDimensions": _args("A", ("executable", P), ("num_outputs", c_size_t),
                                              ("dims", P), ("dim_sizes", P)),
    "PJRT_Executable_OutputMemoryKinds": _args("A", ("executable", P), ("num_outputs", c_size_t),
                                               ("memory_kinds", P), ("memory_kind_sizes", P)),
    "PJRT_Executable_Serialize": _args("A", ("executable", P), *_out_str("serialized_bytes"),
                                       ("serialized_executable", P), ("serialized_executable_deleter", P)),
    "PJRT_Executable_DeserializeAndLoad": _args(
        "A", ("client", P), ("serialized_executable", P), ("serialized_executable_size", c_size_t),
        ("loaded_executable", P), ("overridden_serialized_compile_options", P),
        ("overridden_serialized_compile_options_size", c_size_t)),
    "PJRT_Buffer_Destroy": _args("A", ("buffer", P)),
    "PJRT_Buffer_ElementType": _args("A", ("buffer", P), ("type", c_int)),
    "PJRT_Buffer_Dimensions": _args("A", ("buffer", P), ("dims", P), ("num_dims", c_size_t)),
    "PJRT_Buffer_UnpaddedDimensions": _args("A", ("buffer", P), ("unpadded_dims", P),
                                            ("num_dims", c_size_t)),
    "PJRT_Buffer_DynamicDimensionIndices": _args("A", ("buffer", P), ("dynamic_dim_indices", P),
                                                 ("num_dynamic_dims", c_size_t)),
    "PJRT_Buffer_GetMemoryLayout": _args("A", ("buffer", P), ("layout", MemoryLayout)),
    "PJRT_Buffer_ToHostBuffer": _args("A", ("src", P), ("host_layout", P), ("dst", P),
                                      ("dst_size", c_size_t), ("event", P)),
    "PJRT_Buffer_OnDeviceSizeInBytes": _args("A", ("buffer", P), ("on_device_size_in_bytes", c_size_t)),
    "PJRT_Buffer_Delete": _args("A", ("buffer", P)),
    "PJRT_Buffer_IsDeleted": _args("A", ("buffer", P), ("is_deleted", c_bool)),
    "PJRT_Buffer_CopyToDevice": _args("A", ("buffer", P), ("dst_device", P), ("dst_buffer", P)),
    "PJRT_Buffer_CopyToMemory": _args("A", ("buffer", P), ("dst_memory", P), ("dst_buffer", P)),
    "PJRT_Buffer_IsOnCpu": _args("A", ("buffer", P), ("is_on_cpu", c_bool)),
    "PJRT_Buffer_Device": _args("A", ("buffer", P), ("device", P)),
    "PJRT_Buffer_Memory": _args("A", ("buffer", P), ("memory", P)),
    "PJRT_Buffer_ReadyEvent": _args("A", ("buffer", P), ("event", P)),
    "PJRT_Buffer_UnsafePointer": _args("A", ("buffer", P), ("buffer_pointer", ctypes.c_size_t)),
    "PJRT_Buffer_IncreaseExternalReferenceCount": _args("A", ("buffer", P)),
    "PJRT_Buffer_DecreaseExternalReferenceCount": _args("A", ("buffer", P)),
    "PJRT_Buffer_OpaqueDeviceMemoryDataPointer": _args("A", ("buffer", P), ("device_memory_ptr", P)),
}

#: the callback JAX hands PJRT_Event_OnReady: void (*)(PJRT_Error*, void* user_arg)
ON_READY = ctypes.CFUNCTYPE(None, P, P)
#: PJRT_Device_GetAttributes's deleter: void (*)(PJRT_Device_Attributes*)
DELETER = ctypes.CFUNCTYPE(None, P)
#: an entry of the table: PJRT_Error* (*)(Args*), or void (*)(Args*)
ENTRY = ctypes.CFUNCTYPE(P, P)
VOID_ENTRY = ctypes.CFUNCTYPE(None, P)

c_int64_p = POINTER(c_int64)
