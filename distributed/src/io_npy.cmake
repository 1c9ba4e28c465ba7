# Sources of the io_npy part: .npy headers and collective MPI-IO (plain C++; device shards are
# staged through precompiled local copies).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/io_npy.cpp)
