# Sources of the distributed FFT: plain C++ over the local cuFFT/FFTW plans and the exchange
# engine of the redistribute part; one small CUDA kernel for the normalization.
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/fft.cpp)
if(TESSERA_HAVE_CUDA)
  target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/scale.cu)
endif()
