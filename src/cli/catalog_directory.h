// Where `catalog import`, `catalog export` and `catalog refresh` write: a catalog directory that
// is replaced whole, so a destination holding anything else is refused unless --force.
#ifndef CLOUDFIT_CLI_CATALOG_DIRECTORY_H_
#define CLOUDFIT_CLI_CATALOG_DIRECTORY_H_

#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit::cli {

// Throws CliError (exit 2, the flag named) when `dir` holds files that are not part of a
// catalog and `force` is false. For commands that take long before they write (a refresh
// fetches for minutes): they refuse before doing the work, not after.
void CheckCatalogDestination(const std::string& flag, const std::string& dir, bool force);

// Writes `files` as the catalog directory `dir` (util/file.h: staged, fsync'ed, swapped in
// atomically), with the same refusal as CheckCatalogDestination.
void WriteCatalogDirectory(const std::string& flag, const std::string& dir,
                           const CatalogFiles& files, bool force);

}  // namespace cloudfit::cli

#endif  // CLOUDFIT_CLI_CATALOG_DIRECTORY_H_
