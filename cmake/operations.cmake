# llmk's operations, the one list a new operation is added to. Each name is a
# folder src/ops/<op>/ whose entry.cpp holds its public calls; where they
# exist, its public header src/llmk/<op>.hpp is installed and its perf
# subcommand perf/<op>/benchmark.cpp becomes `llmk-perf <op>` (perf/
# generates the list of subcommands from this one), its reference library
# ops/<op>/reference/*.cpp is built and its tests tests/test_<op>.cpp join the
# suite. In llmk-perf's order: matmul_backward first (the driver's own without
# a subcommand).
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

# An operation's tag in the public API (llmk::impls<Tag>(), ...) is its name
# in CamelCase (gelu_forward: llmk::GeluForward) except where set here.
set(LLMK_OPERATION_TAG_adamw AdamW)

# llmk_operation_tag(<op> <var>): the tag's name of <op>, into <var>.
function(llmk_operation_tag op var)
  if(DEFINED LLMK_OPERATION_TAG_${op})
    set(${var} ${LLMK_OPERATION_TAG_${op}} PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "_" ";" words ${op})
  set(tag "")
  foreach(word ${words})
    string(SUBSTRING ${word} 0 1 first)
    string(SUBSTRING ${word} 1 -1 rest)
    string(TOUPPER ${first} first)
    string(APPEND tag ${first}${rest})
  endforeach()
  set(${var} ${tag} PARENT_SCOPE)
endfunction()
