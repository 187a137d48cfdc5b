// A writer for writer_kill_test to kill: rewrites one file or one directory with
// WriteFileAtomically / WriteDirectoryAtomically forever, alternating two versions.
//   atomic_writer_child file PATH
//   atomic_writer_child dir PATH
// Version v of the file is kVersionBytes of the letter 'A' + v; version v of the directory is
// three files whose contents all start with "version v".
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "util/file.h"

namespace {

constexpr size_t kVersionBytes = 4 << 20;  // large enough that a write takes a while

std::map<std::string, std::string> Tree(int version) {
  std::string tag = "version " + std::to_string(version) + "\n";
  return {{"accelerators.csv", tag + std::string(1 << 20, 'a')},
          {"instances/aws.csv", tag + std::string(1 << 20, 'b')},
          {"models.csv", tag}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: atomic_writer_child file|dir PATH\n");
    return 2;
  }
  std::string mode = argv[1], path = argv[2];
  for (int version = 0;; version = 1 - version) {
    cloudfit::Status s =
        mode == "file"
            ? cloudfit::WriteFileAtomically(path, std::string(kVersionBytes, static_cast<char>('A' + version)))
            : cloudfit::WriteDirectoryAtomically(path, Tree(version));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
}
