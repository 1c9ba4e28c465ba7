# Reliability suites (issue 9): consistency mode, error messages, out of memory, bad arguments
# (MPI GoogleTest, 1-4 ranks), and the fault tests, which drive fault_victim (tests/comm) under mpirun.
add_executable(test_reliability ${CMAKE_CURRENT_LIST_DIR}/test_consistency.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_error_context.cpp ${CMAKE_CURRENT_LIST_DIR}/test_oom.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_bad_args.cpp)
target_link_libraries(test_reliability PRIVATE tessera_test_main tessera::distributed tessera::io)
tessera_add_mpi_test(NAME reliability TARGET test_reliability RANKS ${TESSERA_TEST_RANKS} TIMEOUT 300
                     LABELS reliability)

# A rank dies (SIGKILL, or an exception it does not catch) while 2 others wait in all_reduce, recv
# or an exchange (a redistribute, once per exchange transport): the job must fail within
# TESSERA_COMM_TIMEOUT + 10 s, naming the collective. The cuda variants skip with status 77 where
# there is no GPU.
set(TESSERA_FAULT_TIMEOUT 5)
function(tessera_add_fault_test name mode op device transport)  # ARGN: more VAR=value
  string(JOIN ";" _extra ${ARGN})
  add_test(NAME ${name}
    COMMAND ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/fault_test.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:fault_victim> 3
            ${TESSERA_FAULT_TIMEOUT} ${mode} ${op} ${device} ${TESSERA_MPIEXEC_PREFLAGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 PROCESSORS 3 SKIP_RETURN_CODE 77
    LABELS "reliability;fault;np3"
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;TESSERA_TRANSPORT=${transport};${_extra}")
endfunction()
foreach(mode kill throw)
  foreach(device host cuda)
    foreach(op all_reduce recv)
      tessera_add_fault_test(fault_${mode}_${op}_${device} ${mode} ${op} ${device} auto)
    endforeach()
  endforeach()
  tessera_add_fault_test(fault_${mode}_exchange_host ${mode} exchange host mpi)
  foreach(t nccl nccl-window ipc mpi)
    tessera_add_fault_test(fault_${mode}_exchange_cuda_${t} ${mode} exchange cuda ${t})
  endforeach()
endforeach()
# The victim (the last of 3 ranks) on another emulated node than the 2 that wait: ranks 0-1 and
# rank 2 as 2 emulated nodes, MPI over TCP.
foreach(mode kill throw)
  foreach(op all_reduce recv exchange)
    tessera_add_fault_test(fault_${mode}_${op}_host_emulated_nodes ${mode} ${op} host mpi
                           ${TESSERA_EMULATED_NODES_ENV})
  endforeach()
endforeach()
# On a GPU: every one of the 3 ranks its own emulated node, so that NCCL (over sockets) carries
# the collectives and exchanges the survivors wait in when the victim dies.
foreach(mode kill throw)
  foreach(op all_reduce recv)
    tessera_add_fault_test(fault_${mode}_${op}_cuda_emulated_nodes ${mode} ${op} cuda auto TESSERA_EMULATE_NODES=3
                           OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo)
  endforeach()
  foreach(t auto nccl nccl-window)
    tessera_add_fault_test(fault_${mode}_exchange_cuda_${t}_emulated_nodes ${mode} exchange cuda ${t}
                           TESSERA_EMULATE_NODES=3 OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo)
  endforeach()
endforeach()
