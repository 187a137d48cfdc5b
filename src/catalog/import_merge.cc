#include "catalog/import_merge.h"

#include <fmt/format.h>

#include "catalog/loaders.h"
#include "util/strings.h"

namespace cloudfit {

WorkingCatalog::Types& WorkingCatalog::Provider(const std::string& provider) {
  auto it = providers_.find(provider);
  if (it != providers_.end()) return it->second;
  Types& types = providers_[provider];
  for (const InstanceType& t : base_.instances()) {
    if (t.provider != provider) continue;
    types.by_name.emplace(ToLower(t.name), types.types.size());
    types.types.push_back(t);
  }
  return types;
}

InstanceType* WorkingCatalog::Lookup(Types& types, const std::string& name) {
  auto it = types.by_name.find(ToLower(name));
  return it == types.by_name.end() ? nullptr : &types.types[it->second];
}

InstanceType* WorkingCatalog::Find(const std::string& provider, const std::string& name) {
  return Lookup(Provider(provider), name);
}

InstanceType* WorkingCatalog::FindAnyProvider(const std::string& name) {
  const InstanceType* base_type = base_.LookupInstance(name);
  if (base_type == nullptr) {
    // Types added by an earlier import are not in the base.
    for (auto& [provider, types] : providers_) {
      if (InstanceType* t = Lookup(types, name)) return t;
    }
    return nullptr;
  }
  return Find(base_type->provider, base_type->name);
}

InstanceType* WorkingCatalog::Add(InstanceType type) {
  Types& types = Provider(type.provider);
  types.by_name.emplace(ToLower(type.name), types.types.size());
  types.types.push_back(std::move(type));
  return &types.types.back();
}

Status WorkingCatalog::Finish(CatalogFiles* out) const {
  CatalogFiles files = base_.files();
  for (const auto& [provider, types] : providers_) {
    std::string name = "instances/" + provider + ".csv";
    std::string& text = files[name] = FormatInstancesCsv(types.types);
    CsvTable table;
    CsvOptions options;
    options.borrow_text = true;  // `files` outlives the table
    std::vector<InstanceType> checked;
    Status s = ParseCsv(text, "imported catalog/" + name, options, &table);
    if (s.ok()) s = ParseInstances(table, provider, base_, &checked);
    if (!s.ok()) return Status::Corruption("the merged catalog does not load: " + s.message());
  }
  *out = std::move(files);
  return Status::OK();
}

}  // namespace cloudfit
