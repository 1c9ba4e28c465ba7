# Sources of the io_zarr part (target_sources(tessera_distributed PRIVATE ...)).
# Zarr v2 stores; plain C++ (device shards are staged through host buffers). zlib is optional:
# without it the zlib compressor is reported as unsupported. zarray_meta.cpp (the .zarray parser)
# has no MPI dependency: the fuzz targets build it alone.
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/zarray_meta.cpp
                                           ${CMAKE_CURRENT_SOURCE_DIR}/src/host/io_zarr.cpp)
find_package(ZLIB)
if(ZLIB_FOUND)
  target_link_libraries(tessera_distributed PRIVATE ZLIB::ZLIB)
  set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/io_zarr.cpp APPEND PROPERTY COMPILE_DEFINITIONS TESSERA_HAVE_ZLIB=1)
endif()
