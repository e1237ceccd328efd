#include "core/error.hpp"

namespace gpufmm {
namespace {
thread_local std::string g_last_error;
}

void set_last_error(gpufmm_status_t, const std::string& message) { g_last_error = message; }

const std::string& last_error() noexcept { return g_last_error; }

}  // namespace gpufmm
