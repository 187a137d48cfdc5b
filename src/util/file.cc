#include "util/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "util/strings.h"

namespace cloudfit {

namespace fs = std::filesystem;

namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes now and reports whether close succeeded (it can report a delayed write error).
  bool Close() {
    int fd = fd_;
    fd_ = -1;
    return fd < 0 || ::close(fd) == 0;
  }

 private:
  int fd_;
};

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Flushes a directory's entries (a rename or a new file in it) to the disk.
bool SyncDirectory(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  // Some file systems cannot fsync a directory (EINVAL); nothing more can be done there.
  return ::fsync(fd.get()) == 0 || errno == EINVAL;
}

// Creates `path` exclusively, writes `contents` and fsyncs it.
Status WriteNewFile(const fs::path& path, const std::string& contents, mode_t mode) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    return Status::IOError(fmt::format("{}: cannot create: {}", path.string(), ErrnoText(errno)));
  }
  if (!WriteAll(fd.get(), contents.data(), contents.size()) || ::fsync(fd.get()) != 0 ||
      !fd.Close()) {
    int error = errno;
    ::unlink(path.c_str());
    return Status::IOError(fmt::format("{}: write failed: {}", path.string(), ErrnoText(error)));
  }
  return Status::OK();
}

// Whether a process id belongs to a live process (it may be another program that reused it;
// then its leftovers simply wait for a later run).
bool ProcessAlive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Parses the decimal process id that `name` carries after `prefix` and before '-' or the end.
bool LeftoverPid(const std::string& name, const std::string& prefix, long* pid) {
  if (!StartsWith(name, prefix)) return false;
  std::string rest = name.substr(prefix.size());
  rest = rest.substr(0, rest.find('-'));
  long long value = 0;
  if (rest.empty() || !ParseInt(rest, &value) || value <= 0) return false;
  *pid = static_cast<long>(value);
  return true;
}

// Removes the temporary files that killed writers of `target` left beside it.
void RemoveStaleTempFiles(const fs::path& target) {
  // Appended, not "." + string: GCC 12 warns falsely (-Wrestrict) on that once inlined.
  std::string prefix = ".";
  prefix.append(target.filename().string()).append(".tmp-");
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; it != end && !ec;
       it.increment(ec)) {
    long pid = 0;
    std::string name = it->path().filename().string();
    if (LeftoverPid(name, prefix, &pid) && pid != ::getpid() && !ProcessAlive(pid)) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

std::string RandomSuffix() {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  return fmt::format("{:012x}", generator() & 0xFFFFFFFFFFFFull);
}

}  // namespace

Status ReadFile(const std::string& path, std::string* contents, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == EISDIR) return Status::IOError(path + ": is a directory, expected a file");
    return Status::IOError(path + ": cannot open for reading");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IOError(path + ": cannot open for reading");
  if (S_ISDIR(st.st_mode)) return Status::IOError(path + ": is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) {
    return Status::IOError(path + ": not a regular file (a device, pipe or socket); give a file");
  }
  auto too_large = [&] {
    return Status::IOError(fmt::format("{}: larger than the limit of {} bytes", path, max_bytes));
  };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return too_large();
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(path + ": read failed");
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) return too_large();  // it grew
    text.append(buffer, static_cast<size_t>(n));
  }
  *contents = std::move(text);
  return Status::OK();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  fs::path target(path);
  if (target.filename().empty()) return Status::IOError(path + ": not a file name");
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  struct stat st;
  mode_t mode = 0666;  // less the umask, as for any new file
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::IOError(path + ": is a directory, expected a file");
    mode = st.st_mode & 07777;
  }
  RemoveStaleTempFiles(dir / target.filename());
  fs::path tmp =
      dir / fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), RandomSuffix());
  Status s = WriteNewFile(tmp, contents, mode);
  if (!s.ok()) return Status::IOError(fmt::format("{}: cannot write it: {}", path, s.message()));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("{}: cannot replace it: {}", path, ErrnoText(error)));
  }
  if (!SyncDirectory(dir)) {
    return Status::IOError(fmt::format("{}: written, but the directory could not be flushed: {}",
                                       path, ErrnoText(errno)));
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

bool LooksLikeCatalogDirectory(const std::string& dir, const std::set<std::string>& known,
                               std::string* reason) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return true;
  if (fs::exists(fs::path(dir) / kCatalogMarkerFile, ec)) return true;
  auto allowed = [&](const std::string& relative) {
    if (known.count(relative)) return true;
    for (const std::string& k : known) {
      if (EndsWith(k, "/") && StartsWith(relative, k) && EndsWith(relative, ".csv")) return true;
    }
    return false;
  };
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
       it != end && !ec; it.increment(ec)) {
    std::string relative = fs::relative(it->path(), dir, ec).generic_string();
    fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) continue;
    if (!fs::is_regular_file(status) || !allowed(relative)) {
      *reason = relative;
      return false;
    }
  }
  if (ec) {
    *reason = ec.message();
    return false;
  }
  return true;
}

namespace {

// Puts back or removes what killed writers of `target` left beside it: <name>.tmp-PID trees are
// unfinished and removed; <name>.old-PID trees are the previous catalog, put back when `target`
// is missing (the writer died between its two renames) and removed otherwise.
void CleanDirectoryLeftovers(const fs::path& target) {
  std::string name = target.filename().string();
  std::error_code ec;
  std::vector<fs::path> tmp, old;
  for (fs::directory_iterator it(target.parent_path(), ec), end; it != end && !ec;
       it.increment(ec)) {
    long pid = 0;
    std::string entry = it->path().filename().string();
    if (LeftoverPid(entry, name + ".tmp-", &pid) && !ProcessAlive(pid)) tmp.push_back(it->path());
    if (LeftoverPid(entry, name + ".old-", &pid) && !ProcessAlive(pid)) old.push_back(it->path());
  }
  std::error_code ignored;
  for (const fs::path& p : old) {
    if (!fs::exists(fs::symlink_status(target, ignored))) {
      fs::rename(p, target, ignored);
      if (!ignored) continue;
    }
    fs::remove_all(p, ignored);
  }
  for (const fs::path& p : tmp) fs::remove_all(p, ignored);
  SyncDirectory(target.parent_path());
}

// Writes every file under `root` and fsyncs files and directories.
Status WriteTree(const fs::path& root, const std::map<std::string, std::string>& files) {
  std::error_code ec;
  fs::create_directory(root, ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", root.string(), ec.message()));
  std::set<fs::path> dirs = {root};
  for (const auto& [relative, contents] : files) {
    fs::path path = root / relative;
    if (fs::path(relative).is_absolute() || relative.find("..") != std::string::npos) {
      return Status::InvalidArgument(relative + ": not a path inside the directory");
    }
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return Status::IOError(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
    for (fs::path p = path.parent_path(); p != root && !p.empty(); p = p.parent_path()) {
      dirs.insert(p);
    }
    Status s = WriteNewFile(path, contents, 0666);
    if (!s.ok()) return s;
  }
  Status s = WriteNewFile(root / kCatalogMarkerFile,
                          "Written by cloudfit. The next catalog import or export to this "
                          "directory replaces it whole.\n",
                          0666);
  if (!s.ok()) return s;
  for (const fs::path& d : dirs) {
    if (!SyncDirectory(d)) {
      return Status::IOError(fmt::format("{}: cannot flush: {}", d.string(), ErrnoText(errno)));
    }
  }
  return Status::OK();
}

// The directory `dir` names, absolute and without a trailing separator ("out/" names "out").
Status DirectoryTarget(const std::string& dir, fs::path* target) {
  std::error_code ec;
  *target = fs::absolute(dir, ec).lexically_normal();
  if (ec) return Status::IOError(fmt::format("{}: {}", dir, ec.message()));
  if (target->filename().empty()) *target = target->parent_path();
  return Status::OK();
}

}  // namespace

Status CheckDirectoryReplaceable(const std::string& dir,
                                 const std::map<std::string, std::string>& files,
                                 const DirectoryWriteOptions& options) {
  fs::path target;
  if (Status s = DirectoryTarget(dir, &target); !s.ok()) return s;
  std::error_code ec;
  fs::file_status status = fs::symlink_status(target, ec);
  if (!fs::exists(status)) return Status::OK();
  if (!fs::is_directory(status)) return Status::IOError(dir + ": exists and is not a directory");
  if (options.force) return Status::OK();
  std::set<std::string> known = options.known_files;
  for (const auto& [relative, contents] : files) known.insert(relative);
  std::string reason;
  if (LooksLikeCatalogDirectory(target.string(), known, &reason)) return Status::OK();
  return Status::InvalidArgument(fmt::format(
      "{}: not replaced: it holds '{}', which is not part of a catalog, and writing replaces "
      "the whole directory; choose an empty or new directory, or pass --force to replace it "
      "and everything in it",
      dir, Shown(reason)));
}

Status WriteDirectoryAtomically(const std::string& dir,
                                const std::map<std::string, std::string>& files,
                                const DirectoryWriteOptions& options) {
  fs::path target;
  if (Status s = DirectoryTarget(dir, &target); !s.ok()) return s;
  std::error_code ec;
  fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", parent.string(), ec.message()));
  CleanDirectoryLeftovers(target);

  Status refused = CheckDirectoryReplaceable(dir, files, options);
  if (!refused.ok()) return refused;
  bool had_old = fs::exists(fs::symlink_status(target, ec));

  std::string pid = std::to_string(::getpid());
  fs::path staging = parent / (target.filename().string() + ".tmp-" + pid);
  fs::path old = parent / (target.filename().string() + ".old-" + pid);
  fs::remove_all(staging, ec);
  Status s = WriteTree(staging, files);
  if (!s.ok()) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return s;
  }
  if (!had_old) {
    if (::rename(staging.c_str(), target.c_str()) != 0) {
      int error = errno;
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      return Status::IOError(fmt::format("{}: {}", dir, ErrnoText(error)));
    }
    SyncDirectory(parent);
    return Status::OK();
  }
  // One atomic exchange: `target` is the new tree and `staging` the old one at every instant.
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    SyncDirectory(parent);
    fs::remove_all(staging, ec);
    return Status::OK();
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
    int error = errno;
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return Status::IOError(
        fmt::format("{}: cannot swap in the new directory: {}", dir, ErrnoText(error)));
  }
  // The file system cannot exchange: two renames, with the old tree kept until the new one is
  // in place. A run killed between them leaves <name>.old-PID, which the next run puts back.
  if (::rename(target.c_str(), old.c_str()) != 0) {
    int error = errno;
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return Status::IOError(fmt::format("{}: {}", dir, ErrnoText(error)));
  }
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    int error = errno;
    ::rename(old.c_str(), target.c_str());
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return Status::IOError(fmt::format("{}: {}", dir, ErrnoText(error)));
  }
  SyncDirectory(parent);
  fs::remove_all(old, ec);
  return Status::OK();
}

}  // namespace cloudfit
