# FindOpenBLASCblas: OpenBLAS with its CBLAS header cblas.h (Debian:
# libopenblas-openmp-dev). pkg-config knows where the header of the selected variant
# (pthread/openmp/serial) lives; without pkg-config, FindBLAS with
# BLA_VENDOR=OpenBLAS and a search for cblas.h.
#
# Result: OpenBLASCblas_FOUND and the imported target OpenBLASCblas::OpenBLASCblas
# (GLOBAL: find_package may be called from several directories).
if(TARGET OpenBLASCblas::OpenBLASCblas)
  set(OpenBLASCblas_FOUND TRUE)
  return()
endif()

# Debian's OpenMP build of OpenBLAS first (libopenblas-openmp-dev): its
# threads are the OpenMP runtime's that Kokkos uses (docs/cpu.md). The
# pkg-config file of the variant update-alternatives picks (pthreads by
# default) would otherwise win.
set(_llmk_openblas_openmp_pc /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/pkgconfig)
if(CMAKE_LIBRARY_ARCHITECTURE AND EXISTS ${_llmk_openblas_openmp_pc})
  set(ENV{PKG_CONFIG_PATH} "${_llmk_openblas_openmp_pc}:$ENV{PKG_CONFIG_PATH}")
endif()
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  # (_PKG, not the _PC of before: a build folder's cached pthreads result
  # would otherwise be kept.)
  pkg_check_modules(OpenBLASCblas_PKG QUIET IMPORTED_TARGET GLOBAL openblas)
endif()
if(OpenBLASCblas_PKG_FOUND)
  find_path(OpenBLASCblas_INCLUDE_DIR cblas.h HINTS ${OpenBLASCblas_PKG_INCLUDE_DIRS} PATH_SUFFIXES openblas)
  set(OpenBLASCblas_LIBRARIES PkgConfig::OpenBLASCblas_PKG)
else()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  find_path(OpenBLASCblas_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
  set(OpenBLASCblas_LIBRARIES ${BLAS_LIBRARIES})
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLASCblas
  REQUIRED_VARS OpenBLASCblas_LIBRARIES OpenBLASCblas_INCLUDE_DIR)

if(OpenBLASCblas_FOUND)
  add_library(OpenBLASCblas::OpenBLASCblas INTERFACE IMPORTED GLOBAL)
  target_include_directories(OpenBLASCblas::OpenBLASCblas INTERFACE ${OpenBLASCblas_INCLUDE_DIR})
  target_link_libraries(OpenBLASCblas::OpenBLASCblas INTERFACE ${OpenBLASCblas_LIBRARIES})
endif()
