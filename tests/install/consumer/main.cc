// A program that uses an installed cloudfit: the built-in catalog, a recommendation and an
// export, through the public headers only. Built by tests/install/run.sh with find_package and
// with pkg-config.
#include <iostream>
#include <string>

#include <cloudfit/catalog.h>
#include <cloudfit/export.h>
#include <cloudfit/recommend.h>
#include <cloudfit/workload.h>

int main() {
  using namespace cloudfit;
  Catalog catalog;
  Status s = Catalog::LoadBuiltIn(&catalog);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  Workload w;
  for (const auto& [field, value] : {std::pair<const char*, const char*>{"kind", "lora"},
                                     {"model", "Llama-3.1-8B"}, {"tokens", "1e7"}}) {
    s = SetWorkloadField(&w, field, value);
    if (!s.ok()) break;
  }
  if (s.ok()) s = FinalizeWorkload(catalog, &w);
  Recommendation r;
  if (s.ok()) s = Recommend(catalog, w, RecommendOptions(), &r);
  if (!s.ok() || r.ranked.empty()) {
    std::cerr << "recommend: " << (s.ok() ? "nothing feasible" : s.message()) << "\n";
    return 1;
  }
  std::string task;
  s = Export(ExportTargetFromCandidate(w, r.ranked.front(), "USD"), ExportFormat::kSkyPilot, &task);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  std::cout << catalog.instances().size() << " instance types; best: "
            << r.ranked.front().instance->name << "\n" << task;
  return 0;
}
