# Sources of the redistribute part: redistribute, gather, allgather, scatter, slice (plain C++:
# packing uses the precompiled local::copy, transfers go through comm::ProcessGroup).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/redistribute.cpp)
if(TESSERA_HAVE_CUDA)
  # Row copies (packing) at HBM speed; also used by the halo exchange.
  target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/copy_rows.cu)
endif()
