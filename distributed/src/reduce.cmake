# Sources of the reduce part: the combination of argmin/argmax partials along a split axis.
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/reduce.cpp)
if(TESSERA_HAVE_CUDA)
  target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/reduce.cu)
endif()
