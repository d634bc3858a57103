// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.replica_id (ReplicaId), checked by its shape rule.

// a result that is not u32
func.func @replica_id_0() -> tensor<i32> {
  // expected-error@+1 {{'xla.replica_id' result type must be u32[] by the op's shape rule; got s32[] [ir:result]}}
  %0 = "xla.replica_id"() : () -> tensor<i32>
  return %0 : tensor<i32>
}
