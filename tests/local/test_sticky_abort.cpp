// Death test, run without mpirun: a sticky CUDA error aborts the process with the reason.
#include <gtest/gtest.h>

#include "tessera/config.hpp"
#if TESSERA_HAVE_CUDA
#include "tessera/local/cuda_check.hpp"

TEST(CudaCheckDeathTest, StickyErrorAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(TESSERA_CHECK_CUDA(cudaErrorIllegalAddress),
               "sticky.*cudaErrorIllegalAddress.*test_sticky_abort.cpp");
}
#else
TEST(CudaCheckDeathTest, StickyErrorAborts) { GTEST_SKIP() << "CUDA backend not built"; }
#endif
