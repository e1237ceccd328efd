// The host threads of a plan over several devices (core/thread_group.hpp):
// agreement on errors and values, and a part that fails outside an
// agreement releasing the others instead of leaving them waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/thread_group.hpp"

using gpufmm::Error;
using gpufmm::GroupError;
using gpufmm::ThreadGroup;

TEST(ThreadGroup, AgreesOnTheLowestPartsErrorAndOnValues) {
  for (int G : {1, 2, 3, 4, 8}) {
    ThreadGroup group(G);
    std::mt19937 rng(std::random_device{}());
    const int bad = int(rng() % unsigned(G)), worse = (bad + 1) % G;
    std::atomic<int> caught{0};
    gpufmm::run_parts(group, [&](int g) {
      // Values: the same reduction on every part, many times over.
      for (int round = 0; round < 50; ++round) {
        EXPECT_EQ(group.reduce(g, double(g + round), true), double(G - 1 + round));
        EXPECT_EQ(group.reduce(g, double(g + round), false), double(round));
      }
      group.agree(g, [] {});
      try {
        group.agree(g, [&] {
          if (g == bad || (G > 2 && g == worse)) gpufmm::fail(GPUFMM_ERROR_SIZE_MISMATCH, "part ", g, " is short");
        });
      } catch (const GroupError& e) {
        const int first = G > 2 ? std::min(bad, worse) : bad;
        EXPECT_EQ(e.status(), GPUFMM_ERROR_SIZE_MISMATCH);
        EXPECT_EQ(std::string(e.what()),
                  "GPU part " + std::to_string(first) + ": part " + std::to_string(first) + " is short");
        ++caught;
      }
      // Still usable after an agreed error.
      EXPECT_EQ(group.reduce(g, 1.0, true), 1.0);
    });
    EXPECT_EQ(caught.load(), G) << "every part throws the agreed error";
  }
}

TEST(ThreadGroup, AgreedErrorsReachTheCallerAndOtherExceptionsAreNamed) {
  ThreadGroup group(3);
  try {
    gpufmm::run_parts(group, [&](int g) {
      group.agree(g, [&] {
        if (g == 2) throw std::runtime_error("boom");
      });
    });
    FAIL() << "no error";
  } catch (const GroupError& e) {
    EXPECT_EQ(e.status(), GPUFMM_ERROR_INTERNAL);
    EXPECT_EQ(std::string(e.what()), "GPU part 2: internal error: boom");
  }
  // The group is not broken by an agreed error.
  gpufmm::run_parts(group, [&](int g) { EXPECT_EQ(group.reduce(g, g, true), 2.0); });
}

TEST(ThreadGroup, APartFailingAloneReleasesTheOthers) {
  ThreadGroup group(4);
  std::atomic<int> released{0};
  try {
    gpufmm::run_parts(group, [&](int g) {
      if (g == 1) gpufmm::fail(GPUFMM_ERROR_DEVICE, "part 1's device failed");  // before the meeting
      try {
        group.agree(g, [] {});
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("another part of this plan failed"), std::string::npos) << e.what();
        ++released;
        throw;
      }
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    // The error of the part that failed, not the others' release.
    EXPECT_EQ(e.status(), GPUFMM_ERROR_DEVICE);
    EXPECT_EQ(std::string(e.what()), "GPU part 1: part 1's device failed");
  }
  EXPECT_EQ(released.load(), 3);
  // Broken for good: the next meeting fails at once.
  EXPECT_THROW(gpufmm::run_parts(group, [&](int g) { group.agree(g, [] {}); }), Error);
}
