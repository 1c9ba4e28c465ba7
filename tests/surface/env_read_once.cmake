# Fails if any C++/CUDA source of the project reads the environment outside the settings file
# (local/src/common/config.cpp): settings are read once, each layer's into its own Settings.
# Usage: cmake -DROOT=<source dir> -P env_read_once.cmake
set(allowed "local/src/common/config.cpp")
# The call's name, spelled so that this file does not match a plain grep for it.
string(CONCAT call "get" "env")
set(found "")
foreach(dir local comm distributed capi apps tests)
  file(GLOB_RECURSE files "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.hpp" "${ROOT}/${dir}/*.cu"
       "${ROOT}/${dir}/*.cuh" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.inc" "${ROOT}/${dir}/*.c")
  foreach(f IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${f}")
    if(rel STREQUAL allowed)
      continue()
    endif()
    file(STRINGS "${f}" hits REGEX "${call}|[^a-z_]environ[^a-z_]")
    if(hits)
      list(APPEND found "${rel}: ${hits}")
    endif()
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "the environment is read outside ${allowed} (declare a setting in the layer's settings.cpp):\n  ${text}")
endif()
message(STATUS "the environment is read in ${allowed} only")
