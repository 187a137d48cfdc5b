#include "catalog/import_merge.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit {

std::vector<InstanceType>& WorkingCatalog::Provider(const std::string& provider) {
  auto it = providers_.find(provider);
  if (it != providers_.end()) return it->second;
  std::vector<InstanceType>& types = providers_[provider];
  for (const InstanceType& t : base_.instances()) {
    if (t.provider == provider) types.push_back(t);
  }
  return types;
}

InstanceType* WorkingCatalog::Find(const std::string& provider, const std::string& name) {
  for (InstanceType& t : Provider(provider)) {
    if (ToLower(t.name) == ToLower(name)) return &t;
  }
  return nullptr;
}

InstanceType* WorkingCatalog::FindAnyProvider(const std::string& name) {
  const InstanceType* base_type = nullptr;
  if (!base_.FindInstance(name, &base_type).ok()) {
    // Types added by an earlier import are not in the base.
    for (auto& [provider, types] : providers_) {
      for (InstanceType& t : types) {
        if (ToLower(t.name) == ToLower(name)) return &t;
      }
    }
    return nullptr;
  }
  return Find(base_type->provider, base_type->name);
}

InstanceType* WorkingCatalog::Add(InstanceType type) {
  std::vector<InstanceType>& types = Provider(type.provider);
  types.push_back(std::move(type));
  return &types.back();
}

Status WorkingCatalog::Finish(CatalogFiles* out) const {
  CatalogFiles files = base_.files();
  for (const auto& [provider, types] : providers_) {
    files["instances/" + provider + ".csv"] = FormatInstancesCsv(types);
  }
  Catalog check;
  Status s = Catalog::FromFiles(files, "imported catalog", &check);
  if (!s.ok()) return Status::Corruption("the merged catalog does not load: " + s.message());
  *out = std::move(files);
  return Status::OK();
}

}  // namespace cloudfit
