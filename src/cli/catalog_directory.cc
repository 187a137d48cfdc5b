// The catalog writers' destination check, shared so import, export and refresh refuse alike.
#include "cli/catalog_directory.h"

#include "cli/cli_common.h"
#include "util/file.h"

namespace cloudfit::cli {

namespace {

// Besides the files being written, the built-in catalog's files and any provider's instances
// file are catalog files: a directory holding only those (an older or hand-edited catalog
// without the marker file) is replaced without --force.
DirectoryWriteOptions CatalogWriteOptions(bool force) {
  DirectoryWriteOptions options;
  options.force = force;
  Catalog built_in;
  if (Catalog::LoadBuiltIn(&built_in).ok()) {
    for (const auto& [name, contents] : built_in.files()) options.known_files.insert(name);
  }
  options.known_files.insert("instances/");
  return options;
}

}  // namespace

void CheckCatalogDestination(const std::string& flag, const std::string& dir, bool force) {
  Status s = CheckDirectoryReplaceable(dir, {}, CatalogWriteOptions(force));
  if (!s.ok()) throw CliError{flag + ": " + s.message()};
}

void WriteCatalogDirectory(const std::string& flag, const std::string& dir,
                           const CatalogFiles& files, bool force) {
  Status s = WriteDirectoryAtomically(dir, files, CatalogWriteOptions(force));
  if (!s.ok()) throw CliError{flag + ": " + s.message()};
}

}  // namespace cloudfit::cli
