# tessera_add_mpi_test(NAME name TARGET exe RANKS n... [TIMEOUT s] [LABELS l...] [ARGS a...] [ENV k=v...])
# Registers one CTest test per rank count, named <name>_np<n>, run as
#   MPIEXEC_EXECUTABLE MPIEXEC_NUMPROC_FLAG n MPIEXEC_PREFLAGS exe MPIEXEC_POSTFLAGS args
# Each test reserves n processors so that `ctest -j` does not oversubscribe further.
if(NOT DEFINED TESSERA_MPIEXEC_PREFLAGS)
  set(TESSERA_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
  # Open MPI refuses more ranks than cores unless told; CI has 2 cores and runs 4 ranks.
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version
                  ERROR_QUIET RESULT_VARIABLE _mpiexec_rc)
  # Open MPI also binds the ranks of a 1-2 rank job to cores 0 and 1: under `ctest -j` every
  # concurrent test then shares those two cores (their NCCL proxies and MPI progress spin), which
  # made a 2-rank suite 5x slower on a 4-GPU node. The tests leave placement to the OS.
  if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
    list(APPEND TESSERA_MPIEXEC_PREFLAGS --oversubscribe --bind-to none)
  endif()
  set(TESSERA_MPIEXEC_PREFLAGS "${TESSERA_MPIEXEC_PREFLAGS}" CACHE STRING "Flags before the test program")
endif()

function(tessera_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "RANKS;LABELS;ARGS;ENV" ${ARGN})
  if(NOT T_NAME OR NOT T_TARGET OR NOT T_RANKS)
    message(FATAL_ERROR "tessera_add_mpi_test needs NAME, TARGET and RANKS")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  foreach(n IN LISTS T_RANKS)
    set(test_name ${T_NAME}_np${n})
    add_test(NAME ${test_name}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${TESSERA_MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${test_name} PROPERTIES
      TIMEOUT ${T_TIMEOUT}
      PROCESSORS ${n}
      LABELS "mpi;np${n};${T_LABELS}"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;${T_ENV}")
  endforeach()
endfunction()
