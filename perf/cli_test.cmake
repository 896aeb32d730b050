# One llmk-perf command line that must be refused (perf/CMakeLists.txt's
# perf.cli.* tests): runs EXE with ARGS (a ;-list), and fails unless it exits
# with EXPECT_RC and its output holds EXPECT (a plain substring).
#   cmake -DEXE=<llmk-perf> "-DARGS=--B;abc" -DEXPECT_RC=2 "-DEXPECT=not a whole number" -P cli_test.cmake
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
string(REPLACE ";" " " shown "${ARGS}")
message(STATUS "llmk-perf ${shown}: exit ${rc}\n${all}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "llmk-perf ${shown}: exit ${rc}, expected ${EXPECT_RC}")
endif()
string(FIND "${all}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "llmk-perf ${shown}: the output does not say '${EXPECT}'")
endif()
