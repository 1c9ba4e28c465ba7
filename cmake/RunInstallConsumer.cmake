# cmake -P script behind the install_consumer test: the consumer project (SOURCE_DIR) is built
# with find_package(Tessera) against a shared and a static install, and run on 2 ranks each.
# One install is the build under test (BUILD_DIR, BUILD_SHARED_LIBS=SHARED); the other kind is a
# lean build of PROJECT_SOURCE made here (no tests, no apps, no CUDA; ccache when there is one),
# kept in WORK_DIR/other-build so that later runs rebuild only what changed.
foreach(v BUILD_DIR SHARED PROJECT_SOURCE SOURCE_DIR WORK_DIR GENERATOR MPIEXEC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RunInstallConsumer.cmake: ${v} not set")
  endif()
endforeach()

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: '${ARGN}' failed (${rc})")
  endif()
endfunction()

set(compilers -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_C_COMPILER=${C_COMPILER})
if(FORTRAN)  # the build under test has the Fortran module: the consumers use the same compiler
  list(APPEND compilers -DCMAKE_Fortran_COMPILER=${Fortran_COMPILER})
endif()
# CMAKE_PREFIX_PATH through an initial cache: a list would be split on its way through step().
function(prefix_cache file)
  file(WRITE "${file}" "set(CMAKE_PREFIX_PATH \"${ARGN}\" CACHE STRING \"\")\n")
endfunction()
separate_arguments(preflags UNIX_COMMAND "${MPIEXEC_PREFLAGS}")

# Installs `build` into WORK_DIR/<kind>/prefix, builds the consumer against it and runs it.
function(consume kind build type)
  set(dir "${WORK_DIR}/${kind}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}/files")
  # The C++/C/Fortran install only: the Python package (component python) goes to the interpreter's
  # platlib, an absolute place that --prefix does not move.
  step(${CMAKE_COMMAND} --install "${build}" --prefix "${dir}/prefix" --component Unspecified)
  prefix_cache("${dir}/prefix.cmake" "${dir}/prefix" ${PREFIX_PATH})
  step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${dir}/build" -G "${GENERATOR}" ${compilers} -DCMAKE_BUILD_TYPE=Release
       -C "${dir}/prefix.cmake" -DEXPECT_LIBRARY_TYPE=${type})
  step(${CMAKE_COMMAND} --build "${dir}/build")
  step(${MPIEXEC} -n 2 ${preflags} "${dir}/build/tessera_consumer" "${dir}/files")
  step(${MPIEXEC} -n 2 ${preflags} "${dir}/build/c_consumer")
  if(EXISTS "${dir}/build/f_consumer")
    step(${MPIEXEC} -n 2 ${preflags} "${dir}/build/f_consumer")
  elseif(FORTRAN)
    message(FATAL_ERROR "install_consumer: the Fortran consumer was not built (${kind} install)")
  endif()
  message(STATUS "install_consumer: ${kind} install OK")
endfunction()

if(SHARED)
  set(this shared)
  set(other static)
  set(other_shared OFF)
else()
  set(this static)
  set(other shared)
  set(other_shared ON)
endif()
string(TOUPPER "${this}_LIBRARY" this_type)
string(TOUPPER "${other}_LIBRARY" other_type)
consume(${this} "${BUILD_DIR}" ${this_type})

set(other_build "${WORK_DIR}/other-build")
find_program(CCACHE ccache)
set(launchers)
if(CCACHE)
  set(launchers -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE} -DCMAKE_C_COMPILER_LAUNCHER=${CCACHE})
endif()
prefix_cache("${WORK_DIR}/other-prefix.cmake" ${PREFIX_PATH})
# Only packaging and linking are under test here: unoptimised and without debug info, the other
# kind's library compiles in about half the time (CI has 2 cores).
step(${CMAKE_COMMAND} -S "${PROJECT_SOURCE}" -B "${other_build}" -G "${GENERATOR}" ${compilers} ${launchers}
     -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_FLAGS_DEBUG=-O0
     -C "${WORK_DIR}/other-prefix.cmake" -DBUILD_SHARED_LIBS=${other_shared}
     -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_APPS=OFF -DTESSERA_BUILD_EXAMPLES=OFF -DTESSERA_ENABLE_CUDA=OFF)
step(${CMAKE_COMMAND} --build "${other_build}" --parallel 2)
consume(${other} "${other_build}" ${other_type})
