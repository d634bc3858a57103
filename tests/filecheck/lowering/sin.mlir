// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s
// RUN: xlair-opt %s -p 'xla-to-linalg{target=vulkan}' | filecheck %s --check-prefix=VULKAN
// RUN: xlair-opt %s -p 'xla-to-linalg{target=cuda}' | filecheck %s --check-prefix=CUDA

// CHECK-LABEL: func.func @f32
// On the CPU (or no target), f32 is computed in f64 (lowering/libm.py) and rounded once;
// beyond 2^33 the argument is reduced by Payne-Hanek in 32-bit integers (the f32 argument
// before its widening), the 8 words of 2/pi read by selects, the products' high words from
// their halves (no arith.mului_extended: IREE's CPU code takes it only on 1-D vectors).
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK-NOT: math.sin
// CHECK-NOT: mului_extended
// CHECK: arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NOT: mului_extended
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT: xla.
// CHECK: return
// Vulkan: the device's sin is accurate only near 0; xlair reduces the argument and computes
// sin and cos of the rest by their series, in f32.
// VULKAN-LABEL: func.func @f32
// VULKAN-NOT: f64
// VULKAN-NOT: math.sin
// VULKAN: arith.muli %{{.*}}, %{{.*}} : i32
// VULKAN-NOT: math.sin
// VULKAN: return
// CUDA's device library reduces its arguments itself.
// CUDA-LABEL: func.func @f32
// CUDA-NOT: mului_extended
// CUDA: math.sin %{{.*}} : f32
// CUDA: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.sin"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @f64
// f64 beyond 2^33: Payne-Hanek in 64-bit integers, the 20 words of 2/pi read from a table.
// 2/pi = 0x0.A2F9836E4E441529 FC2757D1F534DDC0 ... (fdlibm's ipio2, in 24-bit pieces: A2F983 6E4E44 1529FC 2757D1 F534DD C0DB62)
// CHECK: %[[T:.*]] = arith.constant dense<[0, -6703182060581546711, -277156292786332224,{{.*}}]> : tensor<20xi64>
// CHECK: linalg.generic
// CHECK: tensor.extract %[[T]]
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK-NOT: math.sin
// CHECK: return
func.func @f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %r = "xla.sin"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}
