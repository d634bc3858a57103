// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.rng_bit_generator (RngBitGenerator), checked by its shape rule.

// state of u32
func.func @rng_bit_generator_0(%arg0: tensor<2xui32>) -> tuple<tensor<2xui32>, tensor<2x3xui32>> {
  // expected-error@+1 {{'xla.rng_bit_generator' initial_state must have shape u64[2] for RNG_THREE_FRY; got u32[2] [rng_bit_generator_c2]}}
  %0 = "xla.rng_bit_generator"(%arg0) {algorithm = "RNG_THREE_FRY", shape = tensor<2x3xui32>} : (tensor<2xui32>) -> tuple<tensor<2xui32>, tensor<2x3xui32>>
  return %0 : tuple<tensor<2xui32>, tensor<2x3xui32>>
}

// -----

// unknown algorithm
func.func @rng_bit_generator_1(%arg0: tensor<2xui64>) -> tuple<tensor<2xui64>, tensor<2x3xui32>> {
  // expected-error@+1 {{'xla.rng_bit_generator' algorithm must be a RandomAlgorithm (RNG_DEFAULT, RNG_THREE_FRY, RNG_PHILOX); got '"RNG_MERSENNE"' [ir:attributes]}}
  %0 = "xla.rng_bit_generator"(%arg0) {algorithm = "RNG_MERSENNE", shape = tensor<2x3xui32>} : (tensor<2xui64>) -> tuple<tensor<2xui64>, tensor<2x3xui32>>
  return %0 : tuple<tensor<2xui64>, tensor<2x3xui32>>
}
