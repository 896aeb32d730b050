// The float64 layers of the reference GPT-2 (reference_layers.cpp), forward
// and backward, on raw row-major arrays; M = B·T rows. Backward functions add
// (+=) to every gradient they produce, as autograd sums the contributions.
#pragma once

#include "model.hpp"

namespace gpt2::ref {

// out (M, OC) = inp (M, K) · w (OC, K)ᵀ + b (OC; null: none)
void matmul(double* out, const double* inp, const double* w, const double* b, index_t M, index_t K,
            index_t OC);
void matmul_backward(double* dinp, double* dw, double* db, const double* dout, const double* inp,
                     const double* w, index_t M, index_t K, index_t OC);

// out = (inp − mean) · rstd · w + b per row of C; saves mean and rstd (M).
void layernorm(double* out, double* mean, double* rstd, const double* inp, const double* w,
               const double* b, index_t M, index_t C);
void layernorm_backward(double* dinp, double* dw, double* db, const double* dout,
                        const double* inp, const double* w, const double* mean, const double* rstd,
                        index_t M, index_t C);

// GPT-2's tanh approximation.
double gelu(double x);
double gelu_derivative(double x);

// qkv (B, T, 3C) → att (B, NH, T, T) (zeros above the diagonal), lse (B, NH, T),
// out (B, T, C).
void attention(double* out, double* att, double* lse, const double* qkv, index_t B, index_t T,
               index_t C, index_t NH);
void attention_backward(double* dqkv, const double* dout, const double* qkv, const double* att,
                        index_t B, index_t T, index_t C, index_t NH);

}  // namespace gpt2::ref
