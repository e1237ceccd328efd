#include "core/error.hpp"

namespace gpufmm {
namespace {
thread_local std::string g_last_error;
}

void set_last_error(gpufmm_status_t, const std::string& message) { g_last_error = message; }

}  // namespace gpufmm

extern "C" const char* gpufmm_last_error_message(void) { return gpufmm::g_last_error.c_str(); }
