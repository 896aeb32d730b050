# Install llmk with a CMake package config, so that a user's
#   find_package(llmk) + target_link_libraries(app llmk::llmk)
# works. The config finds the same dependencies llmk was built with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS llmk EXPORT llmkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers only: everything else is internal to the library. Each
# operation's (cmake/operations.cmake), then the shared ones.
set(llmk_public_headers)
foreach(op ${LLMK_OPERATIONS})
  if(EXISTS ${PROJECT_SOURCE_DIR}/src/llmk/${op}.hpp)
    list(APPEND llmk_public_headers ${PROJECT_SOURCE_DIR}/src/llmk/${op}.hpp)
  endif()
endforeach()
foreach(header bf16 context gradient_reducer host_blas operation tensor_ref types)
  list(APPEND llmk_public_headers ${PROJECT_SOURCE_DIR}/src/llmk/${header}.hpp)
endforeach()
install(FILES ${llmk_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/llmk)
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
