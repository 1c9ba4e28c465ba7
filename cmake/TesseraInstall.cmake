# Install the layers (local, comm, distributed, io), their headers and a relocatable CMake package
# (find_package(Tessera)) that finds every package the exported targets link, so that shared and
# static installs can both be consumed.
include(CMakePackageConfigHelpers)
set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
set(_tessera_targets tessera_local tessera_comm tessera_distributed tessera_io tessera tessera_c)
set(TESSERA_FORTRAN_INSTALLED 0)
if(TARGET tessera_fortran)
  list(APPEND _tessera_targets tessera_fortran)
  set(TESSERA_FORTRAN_INSTALLED 1)
endif()

install(TARGETS ${_tessera_targets}
        EXPORT TesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(layer local comm distributed distributed/io capi)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(FILES ${TESSERA_GENERATED_INCLUDE}/tessera/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)
# The Fortran module file (compiler-specific, like every .mod), where tessera::fortran points.
if(TARGET tessera_fortran)
  install(FILES ${PROJECT_BINARY_DIR}/capi/fortran/mod/tessera.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera/fortran)
endif()
install(EXPORT TesseraTargets NAMESPACE tessera:: DESTINATION ${TESSERA_CMAKE_DIR})

# The packages the config must find: every imported target the exported targets link, PRIVATE
# ones included (a static library passes them on to its consumers as $<LINK_ONLY:...>). A link to
# a package the config does not know stops the configure, so the two cannot drift apart.
foreach(_dep MPI FFTW3 BLAS ZLIB OpenMP Threads CUDAToolkit NCCL nlohmann_json Blosc Zstd HDF5)
  set(TESSERA_DEP_${_dep} 0)
endforeach()
set(_tessera_dep_of_MPI MPI)
set(_tessera_dep_of_FFTW3 FFTW3)
set(_tessera_dep_of_BLAS BLAS)
set(_tessera_dep_of_ZLIB ZLIB)
set(_tessera_dep_of_OpenMP OpenMP)
set(_tessera_dep_of_Threads Threads)
set(_tessera_dep_of_CUDA CUDAToolkit)
set(_tessera_dep_of_NCCL NCCL)
set(_tessera_dep_of_nlohmann_json nlohmann_json)
set(_tessera_dep_of_Blosc Blosc)
set(_tessera_dep_of_Zstd Zstd)
set(_tessera_dep_of_HDF5 HDF5)
foreach(_t IN LISTS _tessera_targets)
  get_target_property(_libs ${_t} LINK_LIBRARIES)
  get_target_property(_ilibs ${_t} INTERFACE_LINK_LIBRARIES)
  foreach(_lib IN LISTS _libs _ilibs)
    string(REGEX MATCHALL "[A-Za-z0-9_]+::" _namespaces "${_lib}")
    foreach(_ns IN LISTS _namespaces)
      string(REPLACE "::" "" _ns "${_ns}")
      if(_ns STREQUAL "tessera")
        continue()
      elseif(DEFINED _tessera_dep_of_${_ns})
        set(TESSERA_DEP_${_tessera_dep_of_${_ns}} 1)
      else()
        message(FATAL_ERROR "${_t} links ${_lib}: add its package to cmake/TesseraInstall.cmake and "
                            "cmake/TesseraConfig.cmake.in (find_dependency)")
      endif()
    endforeach()
  endforeach()
endforeach()
if(NOT TESSERA_DEP_MPI OR NOT TESSERA_DEP_FFTW3)
  message(FATAL_ERROR "TesseraInstall: the targets' link lists were not read (MPI, FFTW3 not seen)")
endif()

configure_package_config_file(cmake/TesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesseraConfig.cmake INSTALL_DESTINATION ${TESSERA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
# The Find modules the config's find_dependency calls need, next to it.
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindFFTW3.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindBlosc.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindZstd.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})
