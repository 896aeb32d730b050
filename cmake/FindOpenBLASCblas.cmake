# FindOpenBLASCblas: OpenBLAS with its CBLAS header cblas.h (Debian:
# libopenblas-dev). pkg-config knows where the header of the selected variant
# (pthread/openmp/serial) lives; without pkg-config, FindBLAS with
# BLA_VENDOR=OpenBLAS and a search for cblas.h.
#
# Result: OpenBLASCblas_FOUND and the imported target OpenBLASCblas::OpenBLASCblas
# (GLOBAL: find_package may be called from several directories).
if(TARGET OpenBLASCblas::OpenBLASCblas)
  set(OpenBLASCblas_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(OpenBLASCblas_PC QUIET IMPORTED_TARGET GLOBAL openblas)
endif()
if(OpenBLASCblas_PC_FOUND)
  find_path(OpenBLASCblas_INCLUDE_DIR cblas.h HINTS ${OpenBLASCblas_PC_INCLUDE_DIRS} PATH_SUFFIXES openblas)
  set(OpenBLASCblas_LIBRARIES PkgConfig::OpenBLASCblas_PC)
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
