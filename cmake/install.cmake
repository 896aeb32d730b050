# Install llmk with a CMake package config, so that a user's
#   find_package(llmk) + target_link_libraries(app llmk::llmk)
# works. The config finds the same dependencies llmk was built with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS llmk EXPORT llmkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers only: everything else is internal to the library.
install(FILES
    ${PROJECT_SOURCE_DIR}/src/llmk/adamw.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/attention_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/attention_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/bf16.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/classifier_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/classifier_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/context.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/encoder_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/gelu_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/gelu_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/residual_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/squared_norm.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/gradient_reducer.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/host_blas.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/layernorm_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/layernorm_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/matmul_backward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/matmul_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/encoder_forward.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/operation.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/tensor_ref.hpp
    ${PROJECT_SOURCE_DIR}/src/llmk/types.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/llmk)
# The reducer's engines, llmk::mpi and llmk::nccl, where built.
foreach(engine mpi nccl)
  string(TOUPPER ${engine} ENGINE)
  if(LLMK_HAVE_${ENGINE})
    set_target_properties(llmk_${engine} PROPERTIES EXPORT_NAME ${engine})
    install(TARGETS llmk_${engine} EXPORT llmkTargets
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(FILES ${PROJECT_SOURCE_DIR}/src/llmk/${engine}.hpp
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/llmk)
  endif()
endforeach()
if(LLMK_HAVE_NCCL)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)
endif()
install(EXPORT llmkTargets NAMESPACE llmk:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/llmkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/llmkConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/llmkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/llmkConfig.cmake ${PROJECT_BINARY_DIR}/llmkConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)
