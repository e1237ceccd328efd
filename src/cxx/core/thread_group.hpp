// The host threads of one plan that spans several devices of this process
// (the FMM-FFT over several GPUs: src/cuda/fmmfft/multi.cu), one thread per
// device ("part"): a barrier, agreement on errors and on values, and the
// launch of the parts. The collectives of a plan over MPI ranks
// (src/mpi/collective.hpp) in one process.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace gpufmm {

// An error every part agreed on (every part's thread throws it).
class GroupError : public Error {
 public:
  using Error::Error;
};

// G parts meet in agree() and reduce(), every part calling them in the same
// order. A part that fails outside an agreement breaks the group
// (abandon(), done by run_parts): the other parts' next meeting then fails
// instead of waiting for it, and so does every later one.
class ThreadGroup {
 public:
  explicit ThreadGroup(int G) : G_(G), err_(static_cast<size_t>(G)), val_(static_cast<size_t>(G)) {}

  int size() const { return G_; }

  // Runs f on part g; when it threw on any part, every part throws the
  // lowest part's error as a GroupError "GPU part h: ..." (an error that
  // is already a GroupError keeps its text).
  void agree(int g, const std::function<void()>& f) {
    std::exception_ptr e;
    try {
      f();
    } catch (...) {
      e = std::current_exception();
    }
    err_[size_t(g)] = e;
    barrier();
    int who = -1;
    for (int h = 0; h < G_ && who < 0; ++h)
      if (err_[size_t(h)]) who = h;
    const std::exception_ptr first = who >= 0 ? err_[size_t(who)] : nullptr;
    barrier();  // every part has read before any writes again
    if (first) rethrow_named(who, first);
  }

  // Rethrows e as a GroupError "GPU part g: ..." (a GroupError as it is).
  [[noreturn]] static void rethrow_named(int g, std::exception_ptr e) {
    const std::string part = "GPU part " + std::to_string(g) + ": ";
    try {
      std::rethrow_exception(e);
    } catch (const GroupError&) {
      throw;
    } catch (const Error& x) {
      throw GroupError(x.status(), part + x.what());
    } catch (const std::bad_alloc&) {
      throw GroupError(GPUFMM_ERROR_OUT_OF_MEMORY, part + "host memory allocation failed (std::bad_alloc)");
    } catch (const std::exception& x) {
      throw GroupError(GPUFMM_ERROR_INTERNAL, part + "internal error: " + x.what());
    }
  }

  // Every part's v reduced (the largest, or the smallest): the same on
  // every part.
  double reduce(int g, double v, bool largest) {
    val_[size_t(g)] = v;
    barrier();
    double r = val_[0];
    for (double w : val_) r = largest ? std::max(r, w) : std::min(r, w);
    barrier();
    return r;
  }

  void abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = true;
    cv_.notify_all();
  }

 private:
  void barrier() {
    std::unique_lock<std::mutex> lock(mu_);
    require(!broken_, GPUFMM_ERROR_INTERNAL, "another part of this plan failed earlier: destroy the plan");
    const long gen = gen_;
    if (++count_ == G_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen != gen_ || broken_; });
    require(gen != gen_, GPUFMM_ERROR_INTERNAL, "another part of this plan failed: destroy the plan");
  }

  const int G_;
  std::vector<std::exception_ptr> err_;
  std::vector<double> val_;
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
  long gen_ = 0;
  bool broken_ = false;
};

// Runs f(g) for every part, g = 0 on this thread and the others on threads
// of their own. A part that fails with anything but an agreed error
// abandons the group, and its error (the first such) is rethrown, named
// "GPU part g: ..."; otherwise the agreed error.
inline void run_parts(ThreadGroup& group, const std::function<void(int)>& f) {
  const int G = group.size();
  std::vector<std::exception_ptr> err(static_cast<size_t>(G));
  std::mutex mu;
  int root = -1;  // the first part that failed alone
  auto body = [&](int g) {
    try {
      f(g);
    } catch (const GroupError&) {
      err[size_t(g)] = std::current_exception();
    } catch (...) {
      err[size_t(g)] = std::current_exception();
      {
        std::lock_guard<std::mutex> lock(mu);
        if (root < 0) root = g;
      }
      group.abandon();
    }
  };
  std::vector<std::thread> threads;
  for (int g = 1; g < G; ++g) threads.emplace_back(body, g);
  body(0);
  for (auto& t : threads) t.join();
  if (root >= 0) ThreadGroup::rethrow_named(root, err[size_t(root)]);
  for (const auto& e : err)
    if (e) std::rethrow_exception(e);
}

}  // namespace gpufmm
