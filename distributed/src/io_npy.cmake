# Sources of the io_npy part: .npy headers (npy_header.cpp: pure, no MPI, also built alone by the
# fuzz targets) and collective MPI-IO (plain C++; device shards are staged through precompiled
# local copies).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/npy_header.cpp
                                           ${CMAKE_CURRENT_SOURCE_DIR}/src/host/io_npy.cpp)
