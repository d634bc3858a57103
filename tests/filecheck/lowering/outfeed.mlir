// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Two outfeeds threaded by a token: the second call takes the token the first returns.
// CHECK-LABEL: func.func @write
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %[[T:.*]]: tensor<i1>) -> tensor<i1>
// CHECK: %[[T1:.*]] = call @xlair_host.outfeed_{{[0-9]}}(%[[X]], %[[T]]) : (tensor<2xf32>, tensor<i1>) -> tensor<i1>
// CHECK: %[[T2:.*]] = call @xlair_host.outfeed_{{[0-9]}}(%[[X]], %[[T1]])
// CHECK: return %[[T2]]
func.func @write(%x: tensor<2xf32>, %t: !xla.token) -> !xla.token {
  %0 = "xla.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<2xf32>, !xla.token) -> !xla.token
  %1 = "xla.outfeed"(%x, %0) {outfeed_config = ""} : (tensor<2xf32>, !xla.token) -> !xla.token
  return %1 : !xla.token
}
