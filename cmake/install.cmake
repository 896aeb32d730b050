# Install llmk with a CMake package config, so that a user's
#   find_package(llmk) + target_link_libraries(app llmk::llmk)
# works. The config finds the same dependencies llmk was built with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS llmk EXPORT llmkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/llmk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(EXPORT llmkTargets NAMESPACE llmk:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/llmkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/llmkConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/llmkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/llmkConfig.cmake ${PROJECT_BINARY_DIR}/llmkConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/llmk)
