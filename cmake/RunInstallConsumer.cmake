# cmake -P script behind the install_consumer test: install the build into WORK_DIR/prefix,
# configure and build SOURCE_DIR against it with find_package(Tessera), run it on 2 ranks.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR MPIEXEC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RunInstallConsumer.cmake: ${v} not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: '${ARGN}' failed (${rc})")
  endif()
endfunction()

step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
separate_arguments(preflags UNIX_COMMAND "${MPIEXEC_PREFLAGS}")
step(${MPIEXEC} -n 2 ${preflags} "${WORK_DIR}/build/tessera_consumer")
message(STATUS "install_consumer: OK")
