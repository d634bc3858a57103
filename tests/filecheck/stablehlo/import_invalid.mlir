// RUN: xlair-opt --import-stablehlo --split-input-file --verify-diagnostics %s

func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' has api_version 4 (API_VERSION_TYPED_FFI); xlair's CustomCall calls its targets with the original convention}}
  %0 = stablehlo.custom_call @foo(%a) {api_version = 4 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'stablehlo.collective_permute': with channel_handle 1 (> 0) works across partitions}}
  %0 = "stablehlo.collective_permute"(%a) {
    source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>
  } : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// expected-error @+1 {{@main argument 0 has element type i4, which is not an XLA element type}}
func.func @main(%a: tensor<4xi4>) -> tensor<4xi4> {
  return %a : tensor<4xi4>
}

// -----

func.func @main() -> tensor<4xi8> {
  // expected-error @+1 {{'stablehlo.constant' result has element type i4, which is not an XLA element type}}
  %0 = stablehlo.constant dense<1> : tensor<4xi4>
  %1 = stablehlo.convert %0 : (tensor<4xi4>) -> tensor<4xi8>
  return %1 : tensor<4xi8>
}

// -----

func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error @+1 {{'stablehlo.clamp': 'xla.clamp' operand must have an ordered (non-complex) element type}}
  %0 = stablehlo.clamp %a, %a, %a : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
