// GoogleTest main for MPI programs. Every rank runs every test. A failure is printed by the rank
// that saw it, prefixed with "[rank r]"; rank 0 prints one line per test with the ranks that
// failed and the summary; the exit code is the same on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "device_test.hpp"
#include "tessera/local/error.hpp"

namespace {

class MpiPrinter : public ::testing::EmptyTestEventListener {
 public:
  MpiPrinter(int rank, int size) : rank_(rank), size_(size) {}

  void OnTestProgramStart(const ::testing::UnitTest& u) override {
    if (rank_ == 0)
      std::printf("[==========] %d tests from %d suites on %d rank(s)\n",
                  u.test_to_run_count(), u.test_suite_to_run_count(), size_);
  }
  void OnTestStart(const ::testing::TestInfo& t) override {
    if (rank_ == 0) std::printf("[ RUN      ] %s.%s\n", t.test_suite_name(), t.name());
    std::fflush(stdout);
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                   r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
      std::fflush(stderr);
    } else if (r.skipped() && rank_ == 0) {
      std::printf("[rank 0] skipped: %s\n", r.message());
    }
  }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    // Every rank reaches here for every test, so these collectives always match.
    const int mine[2] = {t.result()->Failed() ? 1 : 0, t.result()->Skipped() ? 1 : 0};
    std::vector<int> all(2 * static_cast<std::size_t>(size_));
    MPI_Gather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank_ != 0) return;
    std::string failed_ranks;
    bool skipped = false;
    for (int r = 0; r < size_; ++r) {
      if (all[2 * r]) failed_ranks += (failed_ranks.empty() ? "" : ",") + std::to_string(r);
      skipped = skipped || all[2 * r + 1];
    }
    const std::string name = std::string(t.test_suite_name()) + "." + t.name();
    const long long ms = static_cast<long long>(t.result()->elapsed_time());
    if (!failed_ranks.empty()) {
      std::printf("[  FAILED  ] %s on rank(s) %s (%lld ms)\n", name.c_str(), failed_ranks.c_str(), ms);
      failures_.push_back(name + " (rank(s) " + failed_ranks + ")");
    } else if (skipped) {
      std::printf("[  SKIPPED ] %s (%lld ms)\n", name.c_str(), ms);
      ++skipped_;
    } else {
      std::printf("[       OK ] %s (%lld ms)\n", name.c_str(), ms);
      ++passed_;
    }
    std::fflush(stdout);
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    if (rank_ != 0) return;
    std::printf("[==========] %d ranks: %d passed, %d skipped, %zu failed\n", size_, passed_,
                skipped_, failures_.size());
    for (const auto& f : failures_) std::printf("[  FAILED  ] %s\n", f.c_str());
    std::fflush(stdout);
  }

 private:
  int rank_, size_;
  int passed_ = 0, skipped_ = 0;
  std::vector<std::string> failures_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tessera::set_process_rank(rank);
  tessera::testing::init_test_environment(MPI_COMM_WORLD);

  ::testing::InitGoogleTest(&argc, argv);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new MpiPrinter(rank, size));

  int local_fail = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_fail = 0;
  MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_fail;
}
