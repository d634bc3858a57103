// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.population_count (Element-wise unary functions), checked by its shape rule.

// f32 is not an element type of population_count
func.func @population_count_type(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.population_count' operand must have signed integer or unsigned integer element type; got f32[2,3] [popcnt_i1]}}
  %0 = "xla.population_count"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// a tuple operand
func.func @population_count_tuple(%a: tuple<tensor<2x3xi8>>) -> tensor<2x3xi8> {
  // expected-error@+1 {{'xla.population_count' operand must be an array; got (s8[2,3]) [popcnt_i1]}}
  %0 = "xla.population_count"(%a) : (tuple<tensor<2x3xi8>>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}
