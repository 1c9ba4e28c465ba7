# Interop tests of tessera::io Zarr stores (add_test ...), included by tests/CMakeLists.txt.
# Tessera (3 ranks) writes stores that zarr-python 2 checks; zarr-python writes stores that
# Tessera (2 ranks) loads: every v2 compressor (zlib, gzip, zstd, Blosc with each inner codec and
# shuffle), order F and big-endian. Python tests exit 77 (skipped) where zarr cannot be imported; the
# reader then finds no stores and skips too.
add_executable(zarr_interop ${CMAKE_CURRENT_SOURCE_DIR}/io/zarr_interop.cpp)
target_link_libraries(zarr_interop PRIVATE tessera::io)

if(EXISTS /usr/bin/python3)
  set(_zarr_python_default /usr/bin/python3)  # Debian's python3-zarr lives there
else()
  find_program(_zarr_python_default python3)
endif()
set(TESSERA_ZARR_PYTHON "${_zarr_python_default}" CACHE FILEPATH "Python with zarr 2 for the Zarr interop tests")

set(_zarr_dir ${CMAKE_CURRENT_BINARY_DIR}/zarr_interop_stores)
file(MAKE_DIRECTORY ${_zarr_dir})
set(_zarr_env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")

add_test(NAME zarr_interop_tessera_write
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${TESSERA_MPIEXEC_PREFLAGS}
          $<TARGET_FILE:zarr_interop> ${MPIEXEC_POSTFLAGS} write ${_zarr_dir}/from_tessera
  WORKING_DIRECTORY ${_zarr_dir})
set_tests_properties(zarr_interop_tessera_write PROPERTIES
  FIXTURES_SETUP zarr_from_tessera PROCESSORS 3 TIMEOUT 120 LABELS "mpi;io;zarr" ENVIRONMENT "${_zarr_env}")

add_test(NAME zarr_interop_python_check
  COMMAND ${TESSERA_ZARR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/zarr_check.py check ${_zarr_dir}/from_tessera
  WORKING_DIRECTORY ${_zarr_dir})
set_tests_properties(zarr_interop_python_check PROPERTIES
  FIXTURES_REQUIRED zarr_from_tessera SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "io;zarr")

add_test(NAME zarr_interop_python_write
  COMMAND ${TESSERA_ZARR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/zarr_check.py write ${_zarr_dir}/from_python
  WORKING_DIRECTORY ${_zarr_dir})
set_tests_properties(zarr_interop_python_write PROPERTIES
  FIXTURES_SETUP zarr_from_python SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "io;zarr")

add_test(NAME zarr_interop_tessera_read
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${TESSERA_MPIEXEC_PREFLAGS}
          $<TARGET_FILE:zarr_interop> ${MPIEXEC_POSTFLAGS} read ${_zarr_dir}/from_python
  WORKING_DIRECTORY ${_zarr_dir})
set_tests_properties(zarr_interop_tessera_read PROPERTIES
  FIXTURES_REQUIRED zarr_from_python SKIP_RETURN_CODE 77 PROCESSORS 2 TIMEOUT 120 LABELS "mpi;io;zarr"
  ENVIRONMENT "${_zarr_env}")
