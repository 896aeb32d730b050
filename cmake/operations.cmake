# llmk's operations, the one list a new operation is added to. Each name is a
# folder src/ops/<op>/ whose entry.cpp holds its public calls; where they
# exist, its public header src/llmk/<op>.hpp is installed and its perf
# subcommand perf/<op>/benchmark.cpp becomes `llmk-perf <op>` (perf/
# generates the list of subcommands from this one). In llmk-perf's order:
# matmul_backward first (the driver's own without a subcommand).
set(LLMK_OPERATIONS
  matmul_backward
  layernorm_backward
  attention_backward
  attention_backward_recompute  # declared in llmk/attention_backward.hpp; timed by attention_backward's
  classifier_backward
  classifier_forward
  gelu_backward
  encoder_backward
  gelu_forward
  layernorm_forward
  matmul_forward
  encoder_forward
  residual_forward
  adamw
  squared_norm
  attention_forward)
