// Reading files with a size limit, and writing files and directories so that nothing is lost:
// a reader (or a crash, or kill -9) sees either the old content or the new, never a mixture,
// never nothing.
#ifndef CLOUDFIT_UTIL_FILE_H_
#define CLOUDFIT_UTIL_FILE_H_

#include <map>
#include <set>
#include <string>

#include "cloudfit/status.h"
#include "util/validate.h"

namespace cloudfit {

// Reads a regular file of at most max_bytes. Directories, devices, FIFOs and sockets are refused
// without reading (so /dev/zero or a named pipe cannot eat memory or hang), and so is a file
// larger than the limit.
Status ReadFile(const std::string& path, std::string* contents,
                size_t max_bytes = kMaxDataFileBytes);

// Writes `contents` to a new file beside `path`, flushes it to the disk (fsync), renames it over
// `path` and flushes the directory, so readers see the old file or the new one and a crash at
// any point loses neither. A failure leaves any old file untouched. The new file keeps the old
// one's permissions. Temporary files left by a writer that was killed are removed by the next
// write to the same path. Every command that writes a file (probe --out, monitor --csv/--svg,
// recommend --plot, calibrate fit --out) goes through this.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Reads every *.csv under `dir` (recursively) into `files`, keyed by the path relative to dir.
Status ReadCsvTree(const std::string& dir, std::map<std::string, std::string>* files);

struct DirectoryWriteOptions {
  // Replace a non-empty directory even when it does not look like a catalog.
  bool force = false;
  // Relative paths an existing directory may hold and still count as a catalog, besides the
  // files being written; an entry ending in '/' allows every *.csv below that folder.
  std::set<std::string> known_files;
};

// The file marking a directory written by WriteDirectoryAtomically.
inline constexpr const char* kCatalogMarkerFile = ".cloudfit-catalog";

// Whether `dir` may be replaced without --force: it is absent or empty, holds the marker that
// WriteDirectoryAtomically leaves, or holds nothing but files named in `known` (with the
// folder-prefix rule above). On false, *reason names the first entry that is not part of a
// catalog.
bool LooksLikeCatalogDirectory(const std::string& dir, const std::set<std::string>& known,
                               std::string* reason);

// What WriteDirectoryAtomically(dir, files, options) would refuse before writing anything: a
// `dir` that exists and is not a directory, or a non-empty one that is not a catalog (unless
// options.force). For callers that take long before they write, so they refuse first.
Status CheckDirectoryReplaceable(const std::string& dir,
                                 const std::map<std::string, std::string>& files,
                                 const DirectoryWriteOptions& options = {});

// Writes `files` (relative path -> contents) as the directory `dir`:
//  - refuses (InvalidArgument) a non-empty `dir` that is not a catalog, unless options.force;
//  - writes a staging directory beside it, fsyncs every file and directory, then swaps it in
//    with one atomic exchange (renameat2 RENAME_EXCHANGE; where the file system lacks it, two
//    renames) so `dir` is never missing, and removes the old tree only once the new one is in
//    place;
//  - first cleans what a killed earlier run left beside `dir` (<name>.tmp-PID, <name>.old-PID),
//    putting an old tree back where a run died between its two renames.
// A failure leaves any old `dir` untouched.
Status WriteDirectoryAtomically(const std::string& dir,
                                const std::map<std::string, std::string>& files,
                                const DirectoryWriteOptions& options = {});

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_FILE_H_
