// Options of a Laplace FMM plan: validation, the kernel-strategy strings of
// the benchmarks, p from eps.
#include "fmm/laplace/options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "array/array.hpp"
#include "core/error.hpp"
#include "fmm/laplace/math.hpp"
#include "tree/tree.hpp"

namespace gpufmm {
namespace fmm {

namespace {

// One stage's strategies: the names (as the kernel strings write them) and
// the values a stage takes.
struct StageKernels {
  const char* field;  // C options field
  const char* key;    // kernel-string key
  gpufmm_laplace_strategy_t LaplaceGpuKernels::*member;
  gpufmm_laplace_strategy_t allowed[6];
  int nallowed;
};

constexpr StageKernels kStages[] = {
    {"gpu_p2m", "p2m", &LaplaceGpuKernels::p2m, {GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_WPB, GPUFMM_STRATEGY_TPB}, 3},
    {"gpu_m2m", "m2m", &LaplaceGpuKernels::m2m, {GPUFMM_STRATEGY_AUTO, GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_GEMM, GPUFMM_STRATEGY_GPB, GPUFMM_STRATEGY_TPB},
     5},
    {"gpu_m2l", "m2l", &LaplaceGpuKernels::m2l,
     {GPUFMM_STRATEGY_AUTO, GPUFMM_STRATEGY_GEMM, GPUFMM_STRATEGY_GRP, GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_WPB,
      GPUFMM_STRATEGY_TPB},
     6},
    {"gpu_l2l", "l2l", &LaplaceGpuKernels::l2l, {GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_TPB}, 2},
    {"gpu_l2p", "l2p", &LaplaceGpuKernels::l2p, {GPUFMM_STRATEGY_TPT, GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_TPB}, 3},
    {"gpu_p2p", "p2p", &LaplaceGpuKernels::p2p, {GPUFMM_STRATEGY_BPB, GPUFMM_STRATEGY_TPT}, 2},
};

const char* kernel_name(gpufmm_laplace_strategy_t k) {
  switch (k) {
    case GPUFMM_STRATEGY_TPB: return "tpb";
    case GPUFMM_STRATEGY_WPB: return "wpb";
    case GPUFMM_STRATEGY_BPB: return "bpb";
    case GPUFMM_STRATEGY_GPB: return "gpb";
    case GPUFMM_STRATEGY_GRP: return "grp";
    case GPUFMM_STRATEGY_TPT: return "tpt";
    case GPUFMM_STRATEGY_GEMM: return "gemm";
    case GPUFMM_STRATEGY_AUTO: return "auto";
  }
  return "?";
}

// The strategy v (an int, as the C options hold it) of stage st, checked
// before it becomes a gpufmm_laplace_strategy_t.
gpufmm_laplace_strategy_t checked_strategy(const StageKernels& st, int v) {
  for (int i = 0; i < st.nallowed; ++i)
    if (st.allowed[i] == v) return st.allowed[i];
  std::string names;
  for (int i = 0; i < st.nallowed; ++i)
    names += std::string(i ? ", " : "") + "GPUFMM_STRATEGY_" + kernel_name(st.allowed[i]) + " (" +
             std::to_string(int(st.allowed[i])) + ")";
  std::transform(names.begin(), names.end(), names.begin(), [](char c) { return char(std::toupper(c)); });
  fail(GPUFMM_ERROR_INVALID_ARGUMENT, "options field '", st.field, "' = ", v, " is not one of ", names);
}

}  // namespace

void set_gpu_strategies(LaplaceGpuKernels& k, const int (&values)[kNumGpuStages]) {
  static_assert(sizeof kStages / sizeof kStages[0] == kNumGpuStages, "one value per stage");
  for (int i = 0; i < kNumGpuStages; ++i) k.*kStages[i].member = checked_strategy(kStages[i], values[i]);
}

void validate_options(const LaplaceOptions& o) {
  require(std::isfinite(o.eps) && o.eps > 0.0 && o.eps < 1.0, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'eps' = ", o.eps, " is not in (0, 1)");
  checked_precision(static_cast<int>(o.precision), "options field 'precision'");
  require(o.p == 0 || (o.p >= 1 && o.p <= kMaxP), GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'p' = ", o.p, " is not 0 (from eps) or in 1..", kMaxP, " (GPUFMM_LAPLACE_MAX_P)");
  require(o.l_max >= -1 && o.l_max <= tree::kMaxLevel, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'l_max' = ", o.l_max, " is not -1 (cost model) or in 0..", tree::kMaxLevel);
  require(o.adaptive_v_direct == -1 || (o.adaptive_v_direct >= 0 && o.adaptive_v_direct < 1e30),
          GPUFMM_ERROR_INVALID_ARGUMENT, "option 'adaptive_v_direct' = ", o.adaptive_v_direct,
          " is not -1 (the backend's) or a factor >= 0");
  require(o.s_max == -1 || o.s_max >= 1, GPUFMM_ERROR_INVALID_ARGUMENT, "options field 's_max' = ",
          o.s_max, " is not -1 (cost model) or >= 1");
  require(o.stencil == GPUFMM_STENCIL_MODIFIED || o.stencil == GPUFMM_STENCIL_STANDARD,
          GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'stencil' = ", o.stencil,
          " is neither GPUFMM_STENCIL_MODIFIED (0) nor GPUFMM_STENCIL_STANDARD (1)");
  require(o.tree == GPUFMM_LAPLACE_TREE_AUTO || o.tree == GPUFMM_LAPLACE_TREE_UNIFORM ||
              o.tree == GPUFMM_LAPLACE_TREE_ADAPTIVE,
          GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'tree' = ", o.tree,
          " is not GPUFMM_LAPLACE_TREE_AUTO (0), _UNIFORM (1) or _ADAPTIVE (2)");
  require(o.tree != GPUFMM_LAPLACE_TREE_ADAPTIVE || o.l_max == -1, GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'l_max' = ", o.l_max, " with tree = GPUFMM_LAPLACE_TREE_ADAPTIVE: an adaptive tree takes "
          "its depth from s_max; l_max must be -1");
  require(o.cube_padding == 0 || (o.cube_padding >= 1 && o.cube_padding < 2), GPUFMM_ERROR_INVALID_ARGUMENT,
          "options field 'cube_padding' = ", o.cube_padding,
          " is not 0 (cost model) or a factor in [1, 2) (a cube twice the points' is the next depth's)");
  require(o.tree != GPUFMM_LAPLACE_TREE_ADAPTIVE || o.cube_padding == 0 || o.cube_padding == 1,
          GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'cube_padding' = ", o.cube_padding,
          " with tree = GPUFMM_LAPLACE_TREE_ADAPTIVE: an adaptive tree's leaves follow its points in the points' "
          "cube; cube_padding must be 0 or 1");
  require(o.densities == GPUFMM_LAPLACE_DENSITIES_ANY || o.densities == GPUFMM_LAPLACE_DENSITIES_CHARGES ||
              o.densities == GPUFMM_LAPLACE_DENSITIES_DIPOLES,
          GPUFMM_ERROR_INVALID_ARGUMENT, "options field 'densities' = ", o.densities,
          " is not GPUFMM_LAPLACE_DENSITIES_ANY (0), _CHARGES (1) or _DIPOLES (2)");
  for (const StageKernels& st : kStages) checked_strategy(st, o.gpu.*st.member);
}

bool laplace_gpu_parse_kernels(const char* s, LaplaceGpuKernels& k) {
  if (s == nullptr) return true;
  bool ok = true;
  const std::string all(s);
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t end = all.find(',', pos);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      ok = false;
      continue;
    }
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    auto on_off = [&](bool& field, const char* off, const char* on) {
      if (val == on || val == "1") field = true;
      else if (val == off || val == "0") field = false;
      else ok = false;
    };
    auto tri = [&](int& field) {  // auto (-1), off (0), on (1)
      if (val == "auto" || val == "-1") field = -1;
      else if (val == "off" || val == "0") field = 0;
      else if (val == "on" || val == "1") field = 1;
      else ok = false;
    };
    auto count = [&](int& field, int lo) {
      char* e = nullptr;
      const long v = std::strtol(val.c_str(), &e, 10);
      if (e == val.c_str() || *e != '\0' || v < lo || v > (1 << 30)) ok = false;
      else field = int(v);
    };
    const StageKernels* st = nullptr;
    for (const StageKernels& x : kStages)
      if (key == x.key) st = &x;
    if (st != nullptr) {
      bool found = false;
      for (int i = 0; i < st->nallowed; ++i)
        if (val == kernel_name(st->allowed[i])) {
          k.*st->member = st->allowed[i];
          found = true;
        }
      ok = ok && found;
    } else if (key == "p2m_warps") {
      if (val == "auto" || val == "0") k.p2m_warps = 0;
      else if (val == "1" || val == "2" || val == "4") k.p2m_warps = val[0] - '0';
      else ok = false;
    } else if (key == "p2p_mutual") tri(k.p2p_mutual);
    else if (key == "overlap") on_off(k.overlap, "off", "on");
    else if (key == "graph") on_off(k.graph, "off", "on");
    else if (key == "p2p_low_priority") tri(k.p2p_low_priority);
    else if (key == "p2p_after_up") tri(k.p2p_after_up);
    else if (key == "m2l_rcr") tri(k.m2l_rcr);
    else if (key == "p2p_mutual_flow") {  // auto, off, or blocks per SM (>= 1)
      if (val == "auto" || val == "-1" || val == "off" || val == "0") tri(k.p2p_mutual_flow);
      else count(k.p2p_mutual_flow, 1);
    }
    else if (key == "work") on_off(k.work_smem, "global", "smem");
    else if (key == "bpb_slots") count(k.bpb_slots, 0);
    else if (key == "m2l_group") count(k.m2l_group, 1);
    else if (key == "m2l_gemm_mb") count(k.m2l_gemm_mb, 1);
    else if (key == "m2l_lanes") {
      if (val == "4" || val == "8") k.m2l_lanes = val[0] - '0';
      else ok = false;
    } else if (key == "p2p_mutual_lanes") {
      if (val == "1" || val == "2" || val == "4") k.p2p_mutual_lanes = val[0] - '0';
      else ok = false;
    } else if (key == "m2l_threads") {
      if (val == "256" || val == "320" || val == "384" || val == "512") k.m2l_threads = std::atoi(val.c_str());
      else ok = false;
    } else ok = false;
  }
  return ok;
}

namespace {

// ",key=auto|off|on" of a -1/0/1 field (or its count, when `counts`).
std::string tri_string(const char* key, int v, bool counts = false) {
  const std::string val = v < 0 ? "auto" : v == 0 ? "off" : counts ? std::to_string(v) : "on";
  return std::string(",") + key + "=" + val;
}

}  // namespace

std::string laplace_gpu_kernels_string(const LaplaceGpuKernels& k) {
  std::string s;
  for (const StageKernels& st : kStages) s += std::string(s.empty() ? "" : ",") + st.key + "=" + kernel_name(k.*st.member);
  s += tri_string("p2p_mutual", k.p2p_mutual);
  s += k.overlap ? ",overlap=on" : ",overlap=off";
  s += k.graph ? ",graph=on" : ",graph=off";
  s += k.work_smem ? ",work=smem" : ",work=global";
  if (k.p2m_warps) s += ",p2m_warps=" + std::to_string(k.p2m_warps);
  if (k.bpb_slots) s += ",bpb_slots=" + std::to_string(k.bpb_slots);
  if (k.m2l_group) s += ",m2l_group=" + std::to_string(k.m2l_group);
  if (k.m2l_lanes) s += ",m2l_lanes=" + std::to_string(k.m2l_lanes);
  if (k.m2l_threads) s += ",m2l_threads=" + std::to_string(k.m2l_threads);
  if (k.m2l_gemm_mb) s += ",m2l_gemm_mb=" + std::to_string(k.m2l_gemm_mb);
  s += ",p2p_mutual_lanes=" + std::to_string(k.p2p_mutual_lanes);
  s += tri_string("p2p_mutual_flow", k.p2p_mutual_flow, true);
  s += tri_string("p2p_low_priority", k.p2p_low_priority);
  s += tri_string("p2p_after_up", k.p2p_after_up);
  s += tri_string("m2l_rcr", k.m2l_rcr);
  return s;
}

int laplace_p_from_eps(double eps, bool single) {
  return std::max(laplace_p_for_eps(eps, single, false), laplace_p_for_eps(eps, single, true));
}

bool laplace_p_certifies(int p, double eps) {
  const double target = std::log10(0.5 * eps);  // the margin of laplace_p_for_eps
  return laplace_log10_error_model(p, false) <= target && laplace_log10_error_model(p, true) <= target;
}

}  // namespace fmm
}  // namespace gpufmm
