#include <gtest/gtest.h>

#include <string>

#include "tessera/config.hpp"
#if TESSERA_HAVE_NCCL
#include "tessera/comm/nccl_check.hpp"

TEST(NcclCheck, FailedCallThrowsNcclError) {
  int count = 0;
  try {
    // A null communicator is rejected by NCCL itself, with or without a GPU.
    TESSERA_CHECK_NCCL(ncclCommCount(nullptr, &count));
    FAIL() << "ncclCommCount(nullptr) succeeded";
  } catch (const tessera::NcclError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("ncclCommCount(nullptr, &count)"), std::string::npos) << w;
    EXPECT_NE(w.find("test_nccl_check.cpp:"), std::string::npos) << w;
    EXPECT_EQ(e.code(), static_cast<int>(ncclInvalidArgument));
  }
}

TEST(NcclCheck, LibraryVersionMatchesHeader) {
  int v = 0;
  TESSERA_CHECK_NCCL(ncclGetVersion(&v));
  EXPECT_EQ(v / 100, NCCL_VERSION_CODE / 100);  // same major.minor as compiled against
}
#else
TEST(NcclCheck, FailedCallThrowsNcclError) { GTEST_SKIP() << "NCCL not built into this Tessera"; }
#endif
