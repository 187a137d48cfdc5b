#include "util/file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace cloudfit {

namespace fs = std::filesystem;

Status ReadFile(const std::string& path, std::string* contents) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return Status::IOError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": read failed");
  *contents = buffer.str();
  return Status::OK();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IOError(path + ": cannot open " + tmp + " for writing");
    out << contents;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return Status::IOError(path + ": write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return Status::IOError(fmt::format("{}: cannot replace it: {}", path, ec.message()));
  }
  return Status::OK();
}

Status ReadCsvTree(const std::string& dir, std::map<std::string, std::string>* files) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::IOError(dir + ": not a directory");
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".csv") continue;
    std::string relative = fs::relative(it->path(), dir).generic_string();
    Status s = ReadFile(it->path().string(), &(*files)[relative]);
    if (!s.ok()) return s;
  }
  if (ec) return Status::IOError(fmt::format("{}: {}", dir, ec.message()));
  return Status::OK();
}

Status WriteDirectoryAtomically(const std::string& dir,
                                const std::map<std::string, std::string>& files) {
  std::error_code ec;
  fs::path target = fs::absolute(dir, ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", dir, ec.message()));
  if (fs::exists(target) && !fs::is_directory(target)) {
    return Status::IOError(dir + ": exists and is not a directory");
  }
  fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", parent.string(), ec.message()));
  std::string pid = std::to_string(getpid());
  fs::path staging = parent / (target.filename().string() + ".tmp-" + pid);
  fs::path old = parent / (target.filename().string() + ".old-" + pid);
  fs::remove_all(staging, ec);

  auto fail = [&](const std::string& message) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return Status::IOError(message);
  };
  for (const auto& [relative, contents] : files) {
    fs::path path = staging / relative;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return fail(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) return fail(path.string() + ": write failed");
  }
  bool had_old = fs::exists(target);
  if (had_old) {
    fs::rename(target, old, ec);
    if (ec) return fail(fmt::format("{}: {}", target.string(), ec.message()));
  }
  fs::rename(staging, target, ec);
  if (ec) {
    std::error_code ignored;
    if (had_old) fs::rename(old, target, ignored);
    return fail(fmt::format("{}: {}", target.string(), ec.message()));
  }
  if (had_old) fs::remove_all(old, ec);
  return Status::OK();
}

}  // namespace cloudfit
