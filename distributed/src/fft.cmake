# Sources of the distributed FFT: plain C++ over the local cuFFT/FFTW plans and the exchange
# engine of the redistribute part (no kernels of its own).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/fft.cpp)
