# Interop tests of tessera::io HDF5 files (add_test ...), included by tests/CMakeLists.txt where
# parallel HDF5 was found. Tessera (3 ranks) writes a file (and an XDMF sidecar) that h5py checks;
# h5py writes one that Tessera (2 ranks) loads. Python tests exit 77 (skipped) where h5py cannot
# be imported; the reader then finds no file and skips too. Uses io_zarr.cmake's Python.
add_executable(hdf5_interop ${CMAKE_CURRENT_SOURCE_DIR}/io/hdf5_interop.cpp)
target_link_libraries(hdf5_interop PRIVATE tessera::io)

set(_hdf5_dir ${CMAKE_CURRENT_BINARY_DIR}/hdf5_interop_stores)
file(MAKE_DIRECTORY ${_hdf5_dir}/from_tessera)
set(_hdf5_env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")

add_test(NAME hdf5_interop_tessera_write
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${TESSERA_MPIEXEC_PREFLAGS}
          $<TARGET_FILE:hdf5_interop> ${MPIEXEC_POSTFLAGS} write ${_hdf5_dir}/from_tessera
  WORKING_DIRECTORY ${_hdf5_dir})
set_tests_properties(hdf5_interop_tessera_write PROPERTIES
  FIXTURES_SETUP hdf5_from_tessera PROCESSORS 3 TIMEOUT 120 LABELS "mpi;io;hdf5" ENVIRONMENT "${_hdf5_env}")

add_test(NAME hdf5_interop_python_check
  COMMAND ${TESSERA_ZARR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/hdf5_check.py check ${_hdf5_dir}/from_tessera
  WORKING_DIRECTORY ${_hdf5_dir})
set_tests_properties(hdf5_interop_python_check PROPERTIES
  FIXTURES_REQUIRED hdf5_from_tessera SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "io;hdf5")

add_test(NAME hdf5_interop_python_write
  COMMAND ${TESSERA_ZARR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/hdf5_check.py write ${_hdf5_dir}/from_python
  WORKING_DIRECTORY ${_hdf5_dir})
set_tests_properties(hdf5_interop_python_write PROPERTIES
  FIXTURES_SETUP hdf5_from_python SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "io;hdf5")

add_test(NAME hdf5_interop_tessera_read
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${TESSERA_MPIEXEC_PREFLAGS}
          $<TARGET_FILE:hdf5_interop> ${MPIEXEC_POSTFLAGS} read ${_hdf5_dir}/from_python
  WORKING_DIRECTORY ${_hdf5_dir})
set_tests_properties(hdf5_interop_tessera_read PROPERTIES
  FIXTURES_REQUIRED hdf5_from_python SKIP_RETURN_CODE 77 PROCESSORS 2 TIMEOUT 120 LABELS "mpi;io;hdf5"
  ENVIRONMENT "${_hdf5_env}")
