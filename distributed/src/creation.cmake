# Sources of the creation part: precompiled arange/random fills keyed by the global index.
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/creation.cpp)
if(TESSERA_HAVE_CUDA)
  target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/creation.cu)
  # from_function (creation.hpp) launches users' __host__ __device__ lambdas in nvcc translation units.
  target_compile_options(tessera_distributed PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
endif()
