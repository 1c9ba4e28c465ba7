# cmake -DSOURCE_DIR=<tessera source> -DBINARY_DIR=<build dir> -P check_umbrella.cmake
# Fails, listing them, if tessera/tessera.hpp does not #include every public header (every
# <layer>/include/tessera/**.hpp and <layer>/<part>/include/tessera/**.hpp but itself and the
# generated config.hpp). An include under #if (a backend-only header) counts.
cmake_minimum_required(VERSION 3.24)
file(GLOB_RECURSE headers
  "${SOURCE_DIR}/*/include/tessera/*.hpp"
  "${SOURCE_DIR}/*/*/include/tessera/*.hpp")
set(umbrella "")
set(public "")
foreach(h IN LISTS headers)
  # Only the layers' own include folders (not build trees' generated or installed copies).
  file(RELATIVE_PATH from_root "${SOURCE_DIR}" "${h}")
  if(NOT from_root MATCHES "^(local|comm|distributed)(/[a-z_]+)?/include/tessera/")
    continue()
  endif()
  string(REGEX REPLACE "^.*/include/(tessera/.*)$" "\\1" rel "${h}")
  if(rel STREQUAL "tessera/tessera.hpp")
    set(umbrella "${h}")
  elseif(NOT rel STREQUAL "tessera/config.hpp")
    list(APPEND public "${rel}")
  endif()
endforeach()
if(NOT umbrella)
  message(FATAL_ERROR "no tessera/tessera.hpp under ${SOURCE_DIR}/*/include")
endif()

file(STRINGS "${umbrella}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]tessera/")
set(included "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^[^<\"]*[<\"](tessera/[^>\"]+)[>\"].*$" "\\1" rel "${line}")
  list(APPEND included "${rel}")
endforeach()

set(missing "")
foreach(rel IN LISTS public)
  if(NOT rel IN_LIST included)
    list(APPEND missing "${rel}")
  endif()
endforeach()
list(SORT missing)
if(missing)
  list(LENGTH missing n)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "${umbrella} does not include ${n} public header(s):\n  ${text}\n"
                      "(a backend-only header may be included under #if TESSERA_HAVE_CUDA/NCCL)")
endif()
list(LENGTH public n)
message(STATUS "tessera/tessera.hpp includes all ${n} public headers")
