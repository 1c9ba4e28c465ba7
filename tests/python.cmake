# The Python package's pytest suites (python/tests), included by tests/CMakeLists.txt where the
# package is built: every rank runs every test under mpirun, at 1-4 ranks (python_np<n>, label
# python). TESSERA_PYTHON_TEST_DEVICE (default host) picks the arrays' device; the GPU checks
# run them again with "cuda".
if(TESSERA_HAVE_PYTHON)
  foreach(n 1 2 3 4)
    add_test(NAME python_np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${TESSERA_MPIEXEC_PREFLAGS}
                     ${TESSERA_PYTHON_EXECUTABLE} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/python/tests
             WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    set_tests_properties(python_np${n} PROPERTIES TIMEOUT 600 PROCESSORS ${n} LABELS "python;mpi;np${n}"
      ENVIRONMENT "PYTHONPATH=${TESSERA_PYTHON_BUILD_DIR};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;PYTHONDONTWRITEBYTECODE=1")
  endforeach()
endif()
