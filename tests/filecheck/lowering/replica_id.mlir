// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// ReplicaId reads a mutable global that the runtime sets once per replica's VM context
// through the exported @xlair_set_replica: no host call.
// CHECK: util.global private mutable @xlair_replica_id = dense<0> : tensor<i32>
// CHECK-LABEL: func.func @rid() -> tensor<i32>
// CHECK: util.global.load @xlair_replica_id : tensor<i32>
// CHECK-LABEL: func.func @xlair_set_replica(%{{.*}}: tensor<i32>)
// CHECK: util.global.store %{{.*}}, @xlair_replica_id
func.func @rid() -> tensor<ui32> {
  %0 = "xla.replica_id"() : () -> tensor<ui32>
  return %0 : tensor<ui32>
}
