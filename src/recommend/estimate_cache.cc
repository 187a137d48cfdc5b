// Estimates kept across recommendations of the same workload (cloudfit/recommend.h).
#include <algorithm>

#include "cloudfit/recommend.h"

namespace cloudfit {

bool WorkloadEstimates::Find(const InstanceType* type, int nodes, Entry* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find({type, nodes});
  if (it == entries_.end()) return false;
  *out = it->second;
  return true;
}

void WorkloadEstimates::Insert(const InstanceType* type, int nodes, Entry entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.insert_or_assign(std::make_pair(type, nodes), std::move(entry));
}

std::shared_ptr<const CandidatePass> WorkloadEstimates::FindPass(
    const std::string& pricing_key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, pass] : passes_) {
    if (key == pricing_key) return pass;
  }
  return nullptr;
}

void WorkloadEstimates::KeepPass(const std::string& pricing_key,
                                 std::shared_ptr<const CandidatePass> pass) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto same = std::find_if(passes_.begin(), passes_.end(),
                           [&](const auto& kept) { return kept.first == pricing_key; });
  if (same != passes_.end()) passes_.erase(same);
  if (passes_.size() >= kMaxPasses) passes_.erase(passes_.begin());
  passes_.emplace_back(pricing_key, std::move(pass));
}

EstimateCache::EstimateCache(size_t max_workloads)
    : max_workloads_(std::max<size_t>(1, max_workloads)) {}

std::shared_ptr<WorkloadEstimates> EstimateCache::For(const std::string& workload_key) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = workloads_[workload_key];
  slot.last_used = ++clock_;
  if (!slot.estimates) {
    slot.estimates = std::make_shared<WorkloadEstimates>();
    if (workloads_.size() > max_workloads_) {
      // A linear scan for the least recently used: the cache holds a few dozen workloads, and
      // this runs only when a new one arrives at a full cache.
      auto oldest = workloads_.end();
      for (auto it = workloads_.begin(); it != workloads_.end(); ++it) {
        if (oldest == workloads_.end() || it->second.last_used < oldest->second.last_used) {
          oldest = it;
        }
      }
      std::shared_ptr<WorkloadEstimates> kept = slot.estimates;
      workloads_.erase(oldest);  // never the new one: it was used last
      return kept;
    }
  }
  return slot.estimates;
}

}  // namespace cloudfit
