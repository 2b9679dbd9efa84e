// The one auto rule (Registry<Problem>::choose_auto and explain_auto), for every operation.
#include "gemmkit/kernel.hpp"

namespace gemmkit::detail {

std::shared_mutex& registry_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

const KernelInfo* choose_auto(const AutoQuery& q, AutoChoice* explain) {
  using Verdict = AutoCandidate::Verdict;
  const std::optional<int> cc = q.compute_capability;
  const bool cuda = q.backend == Backend::cuda;
  const auto device_runs = [&](const KernelInfo& e) { return !cuda || !cc || *cc >= e.min_compute_capability; };
  const auto text = [](DType d) { return std::string(dtype_name(d)); };

  // The measured table: the winner of the nearest measured shape whose winner accepts it.
  // Its candidates come first in `explain`.
  const KernelInfo* tuned = nullptr;
  std::size_t from_table = 0;
  for (const AutoQuery::Pick& pick : q.measured) {
    const KernelInfo& e = *pick.kernel;
    std::optional<std::string> why = q.rejects(e);
    if (!why)
      if (const std::optional<DType> lower = q.computes_in(e)) why = "computes in " + text(*lower);
    if (!why && !device_runs(e)) why = "needs compute capability " + std::to_string(e.min_compute_capability);
    if (explain) {
      AutoCandidate c{&e, Verdict::chosen, pick.where};
      if (why) c.verdict = Verdict::refused, c.reason += ", but " + *why;
      else if (!cc) c.verdict = Verdict::unchecked,
                    c.reason += ": chosen on a device of compute capability " +
                                std::to_string(q.measured_compute_capability) + " (no device to check)";
      explain->candidates.push_back(std::move(c));
      ++from_table;
    }
    if (!why) {
      tuned = &e;
      break;
    }
  }
  if (tuned && !explain) return tuned;

  std::vector<const KernelInfo*> candidates;
  for (const KernelInfo* e : q.ladder)
    if (e->auto_priority > 0) candidates.push_back(e);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const KernelInfo* a, const KernelInfo* b) { return a->auto_priority > b->auto_priority; });
  // Without a device, the walk below says what devices of other compute capabilities get.
  const KernelInfo* chosen = cc ? tuned : nullptr;
  for (const KernelInfo* e : candidates) {
    if (e == tuned && cc) continue;
    if (chosen && !explain) break;
    AutoCandidate c{e, Verdict::refused, ""};
    const std::optional<std::string> why = q.rejects(*e);
    const std::optional<DType> lower = q.computes_in(*e);
    if (chosen) {
      c.verdict = Verdict::passed_over;
      c.reason = chosen == tuned && cc ? "the tuning table chose " + chosen->name
                 : e->auto_priority == chosen->auto_priority
                     ? "the same priority as " + chosen->name + ", which comes first in ladder order"
                     : "priority below the chosen " + chosen->name + "'s " + std::to_string(chosen->auto_priority);
      if (why) c.reason += "; it would refuse too: " + *why;
      else if (lower) c.reason += "; it computes in " + text(*lower) + " anyway";
    } else if (lower) {
      c.reason = "computes in " + text(*lower) + ", less precise than " + text(q.dtype);
    } else if (why) {
      c.reason = *why;
    } else if (!device_runs(*e)) {
      c.reason = "needs compute capability " + std::to_string(e->min_compute_capability) + ", the device has " +
                 std::to_string(*cc);
    } else {
      chosen = e;
      c.verdict = cuda && !cc ? Verdict::unchecked : Verdict::chosen;
      if (c.verdict == Verdict::unchecked)
        c.reason = "accepts; chosen on a device of compute capability " + std::to_string(e->min_compute_capability) +
                   " or more (no device to check)";
    }
    if (explain) explain->candidates.push_back(std::move(c));
  }
  const KernelInfo* const result = tuned ? tuned : chosen;
  if (!explain) return result;

  // Without a device, the candidates below an unchecked one are what an older device gets:
  // walk on to the first of them that accepts the problem with a lower requirement.
  if (chosen && cuda && !cc) {
    int below = chosen->min_compute_capability;
    for (AutoCandidate& c : explain->candidates)
      if (c.verdict == Verdict::passed_over && !q.rejects(*c.entry) && !q.computes_in(*c.entry) &&
          c.entry->min_compute_capability < below) {
        c.verdict = Verdict::unchecked;
        c.reason = "accepts; chosen on a device of compute capability " +
                   std::to_string(c.entry->min_compute_capability) + " to " + std::to_string(below - 1);
        below = c.entry->min_compute_capability;
      }
  }
  if (tuned && !cc)
    for (std::size_t i = from_table; i < explain->candidates.size(); ++i)
      if (AutoCandidate& c = explain->candidates[i]; c.verdict == Verdict::unchecked)
        c.reason += ", where the tuning table does not apply (compute capability other than " +
                    std::to_string(q.measured_compute_capability) + ")";

  explain->rule = "of the " + std::string(backend_name(q.backend)) +
                  " kernels with an auto priority, highest first (ties in ladder order), the first that accepts "
                  "the problem" +
                  (cuda ? " and that the device can run" : "");
  if (!q.measured_rule.empty())
    explain->rule = (cuda ? "on a device of compute capability " + std::to_string(q.measured_compute_capability) + ": "
                          : std::string()) +
                    std::string(q.measured_rule) + "; failing that, " + explain->rule;
  explain->device_checked = !cuda || cc.has_value();
  explain->chosen = result;
  // As the table's first candidate: the nearest measured shape's winner.
  if (result && from_table > 0 && explain->candidates.front().entry == result)
    explain->tuned_compute_capability = q.measured_compute_capability;
  return result;
}

}  // namespace gemmkit::detail
