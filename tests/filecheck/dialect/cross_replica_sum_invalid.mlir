// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.cross_replica_sum (CrossReplicaSum), checked by its shape rule.

// a PRED operand
func.func @cross_replica_sum_0(%arg0: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error@+1 {{'xla.cross_replica_sum' operand must have one numeric (not PRED) element type; got pred[2] [spec:CrossReplicaSum]}}
  %0 = "xla.cross_replica_sum"(%arg0) {replica_groups = []} : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
