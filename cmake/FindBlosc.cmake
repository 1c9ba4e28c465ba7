# FindBlosc: c-blosc 1.x (libblosc-dev ships neither a CMake config nor a reliable .pc on prefixes).
# Hints: Blosc_ROOT, CMAKE_PREFIX_PATH. Imported target: Blosc::blosc.
find_path(Blosc_INCLUDE_DIR blosc.h)
find_library(Blosc_LIBRARY NAMES blosc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Blosc REQUIRED_VARS Blosc_LIBRARY Blosc_INCLUDE_DIR)
if(Blosc_FOUND AND NOT TARGET Blosc::blosc)
  add_library(Blosc::blosc UNKNOWN IMPORTED)
  set_target_properties(Blosc::blosc PROPERTIES IMPORTED_LOCATION "${Blosc_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Blosc_INCLUDE_DIR}")
endif()
mark_as_advanced(Blosc_INCLUDE_DIR Blosc_LIBRARY)
