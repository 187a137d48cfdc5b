// Reading files, listing catalog directories and writing a directory atomically.
#ifndef CLOUDFIT_UTIL_FILE_H_
#define CLOUDFIT_UTIL_FILE_H_

#include <map>
#include <string>

#include "cloudfit/status.h"

namespace cloudfit {

Status ReadFile(const std::string& path, std::string* contents);

// Writes `contents` to a temporary file beside `path` and renames it over `path`, so readers
// never see a half-written file and a failure leaves any old file untouched.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Reads every *.csv under `dir` (recursively) into `files`, keyed by the path relative to dir.
Status ReadCsvTree(const std::string& dir, std::map<std::string, std::string>* files);

// Writes `files` (relative path -> contents) as the directory `dir`, replacing what was there
// only once everything is written: a failure leaves any old `dir` untouched.
Status WriteDirectoryAtomically(const std::string& dir,
                                const std::map<std::string, std::string>& files);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_FILE_H_
