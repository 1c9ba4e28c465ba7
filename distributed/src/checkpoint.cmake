# Sources of the checkpoint part: named arrays + metadata in one directory of Zarr stores,
# committed by fsync and rename (plain C++; device shards are staged through host buffers).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/checkpoint.cpp)
