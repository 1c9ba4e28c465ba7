# FindFFTW3: FFTW3 headers and the double (fftw3) and float (fftw3f) libraries.
# Hints: FFTW3_ROOT, FFTW_ROOT (variable or environment). Components: double, float.
# Imported targets: FFTW3::fftw3 (double), FFTW3::fftw3f (float).
set(_fftw_hints ${FFTW3_ROOT} ${FFTW_ROOT} $ENV{FFTW3_ROOT} $ENV{FFTW_ROOT})
find_path(FFTW3_INCLUDE_DIR fftw3.h HINTS ${_fftw_hints} PATH_SUFFIXES include)
if(NOT FFTW3_FIND_COMPONENTS)
  set(FFTW3_FIND_COMPONENTS double)
endif()
foreach(_c IN LISTS FFTW3_FIND_COMPONENTS)
  if(_c STREQUAL "double")
    set(_lib fftw3)
  elseif(_c STREQUAL "float")
    set(_lib fftw3f)
  else()
    message(FATAL_ERROR "FindFFTW3: unknown component '${_c}' (use float, double)")
  endif()
  find_library(FFTW3_${_c}_LIBRARY NAMES ${_lib} HINTS ${_fftw_hints}
               PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
  if(FFTW3_${_c}_LIBRARY AND FFTW3_INCLUDE_DIR)
    set(FFTW3_${_c}_FOUND TRUE)
    if(NOT TARGET FFTW3::${_lib})
      add_library(FFTW3::${_lib} UNKNOWN IMPORTED)
      set_target_properties(FFTW3::${_lib} PROPERTIES
        IMPORTED_LOCATION "${FFTW3_${_c}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}")
    endif()
  endif()
  mark_as_advanced(FFTW3_${_c}_LIBRARY)
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_INCLUDE_DIR HANDLE_COMPONENTS)
mark_as_advanced(FFTW3_INCLUDE_DIR)
