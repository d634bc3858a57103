// RUN: xlair-opt --import-stablehlo --split-input-file --verify-diagnostics %s

func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' maps to XLA's CustomCall, which xlair does not have yet}}
  %0 = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
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
