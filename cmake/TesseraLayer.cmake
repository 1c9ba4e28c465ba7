# tessera_add_layer(<name> SOURCES ...): the library target tessera_<name> of one layer, exported
# as tessera::<name>, with its public headers in ${CMAKE_CURRENT_SOURCE_DIR}/include.
function(tessera_add_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  add_library(tessera_${name} ${arg_SOURCES})
  add_library(tessera::${name} ALIAS tessera_${name})
  set_target_properties(tessera_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME tessera_${name})
  target_include_directories(tessera_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()
