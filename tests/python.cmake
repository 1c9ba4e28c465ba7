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

# `cmake --install` of the package: into a staging root (DESTDIR), then imported from there and
# run on 2 ranks (the installed module finds the installed libraries; the environment's library
# path stays behind them, for dependencies found through it, as on the GPU machine).
if(TESSERA_HAVE_PYTHON)
  set(_stage ${CMAKE_CURRENT_BINARY_DIR}/python_install)
  string(REPLACE ";" " " _preflags "${TESSERA_MPIEXEC_PREFLAGS}")
  add_test(NAME python_install
    COMMAND sh -c "rm -rf '${_stage}' && DESTDIR='${_stage}' '${CMAKE_COMMAND}' --install '${PROJECT_BINARY_DIR}' >/dev/null && \
PYTHONPATH='${_stage}${TESSERA_PYTHON_INSTALL_DIR}' LD_LIBRARY_PATH='${_stage}${CMAKE_INSTALL_FULL_LIBDIR}'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} \
'${MPIEXEC_EXECUTABLE}' ${MPIEXEC_NUMPROC_FLAG} 2 ${_preflags} '${TESSERA_PYTHON_EXECUTABLE}' -c \
'import numpy as np, tessera as ts; ts.init(); assert ts.__file__.startswith(\"${_stage}\"), ts.__file__; a = ts.arange(10, split=0); assert int(ts.sum(a)) == 45'")
  set_tests_properties(python_install PROPERTIES TIMEOUT 300 PROCESSORS 2 LABELS "python;package"
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()

# The Python examples (apps/python), --check'ed against their analytic solutions at 1-4 ranks.
if(TESSERA_HAVE_PYTHON)
  foreach(n 1 2 3 4)
    foreach(app heat3d poisson)
      add_test(NAME python_${app}_np${n}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${TESSERA_MPIEXEC_PREFLAGS}
                       ${TESSERA_PYTHON_EXECUTABLE} ${PROJECT_SOURCE_DIR}/apps/python/${app}.py --n 32 --check)
      set_tests_properties(python_${app}_np${n} PROPERTIES TIMEOUT 300 PROCESSORS ${n} LABELS "python;apps;mpi;np${n}"
        ENVIRONMENT "PYTHONPATH=${TESSERA_PYTHON_BUILD_DIR};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
    endforeach()
  endforeach()
endif()
