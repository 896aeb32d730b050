// The precision configurations and the outputs of llmk's backward operations,
// by name, for the reference libraries (llmk_reference), the tests and the
// perf driver. Plain C++17 (no llmk, no Kokkos).
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

namespace llmk::reference {

// The precision configurations, and how products are computed:
//   fp32           everything float, float32 products
//   tf32           everything float, products on TF32 tensor cores (Math::tf32;
//                  matmul_backward only: layernorm_backward has no products to
//                  put there, and its reference refuses it)
//   bf16           everything bf16 (inputs, dinp, dweight, dbias)
//   bf16_fp32grad  inputs and dinp bf16, dweight and dbias float ("bf16-fp32grad")
// (layernorm_backward's mean and rstd are float in every configuration.)
enum class Precision { fp32, tf32, bf16, bf16_fp32grad };
// "fp32", "tf32", "bf16", "bf16-fp32grad"
const char* precision_name(Precision precision);
// The inverse of precision_name; false (and `precision` unchanged) for any other string.
bool parse_precision(std::string_view name, Precision& precision);
// All four, in the order above.
const std::vector<Precision>& all_precisions();
// Refuses a precision that is not one of `allowed`: std::invalid_argument
// "llmk::reference::<operation>: <precision> is not a precision of <operation>".
void require_precision(Precision precision, std::initializer_list<Precision> allowed,
                       std::string_view operation);

// The three outputs, and their names ("dinp", "dweight", "dbias"): the same
// three for matmul_backward and layernorm_backward.
enum class Output { dinp, dweight, dbias };
const char* output_name(Output output);

// Element types: whether inputs (dout, inp, weight; matmul's pre_gelu) are
// bf16, and whether an output is bf16, in a configuration (the same table for
// both operations).
bool bf16_inputs(Precision precision);
bool bf16_output(Precision precision, Output output);

}  // namespace llmk::reference
