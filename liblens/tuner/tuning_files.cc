// The tuner's files: rendered, parsed, written atomically.
#include "tuner/tuning_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "core/kernel_file.h"

namespace lens::tuner {
namespace {

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  constexpr std::string_view kBlanks = " \t\r\n";
  for (size_t at = text.find_first_not_of(kBlanks);
       at != std::string_view::npos; at = text.find_first_not_of(kBlanks, at)) {
    size_t end = text.find_first_of(kBlanks, at);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, "write " + path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

}  // namespace

std::string SysctlPath(const std::string& proc_root, std::string_view key) {
  std::string path = proc_root + "/sys/";
  for (char c : key) path.push_back(c == '.' ? '/' : c);
  return path;
}

std::string RenderSysctlFile(
    const std::map<std::string, std::string>& sysctls) {
  if (sysctls.empty()) return "";
  std::string out =
      "# Written by lens-tuner from tuner.sysctls in the Lens config "
      "(docs/tuner.md).\n# Edits here are reverted at its next check.\n";
  for (const auto& [key, value] : sysctls) out += key + " = " + value + "\n";
  return out;
}

std::string RenderLimitsFile(const std::vector<TunerLimit>& limits) {
  if (limits.empty()) return "";
  std::string out =
      "# Written by lens-tuner from tuner.limits in the Lens config "
      "(docs/tuner.md).\n# Edits here are reverted at its next check.\n";
  for (const TunerLimit& l : limits) {
    const std::string_view type =
        l.type == TunerLimit::Type::kBoth ? "-" : TunerLimitTypeName(l.type);
    out += l.domain + "\t" + std::string(type) + "\t" + l.item + "\t" +
           l.value + "\n";
  }
  return out;
}

std::string LimitKey(const TunerLimit& limit) {
  std::string key = limit.domain == "*" ? "" : limit.domain + " ";
  key += limit.item;
  if (limit.type != TunerLimit::Type::kBoth)
    key += "/" + std::string(TunerLimitTypeName(limit.type));
  return key;
}

std::map<std::string, std::string> ParseLimitsFile(std::string_view text) {
  std::map<std::string, std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string_view> w = Words(line);
    if (w.size() != 4 || w[0].front() == '#') continue;
    TunerLimit limit;
    limit.domain = std::string(w[0]);
    if (w[1] == "soft") {
      limit.type = TunerLimit::Type::kSoft;
    } else if (w[1] == "hard") {
      limit.type = TunerLimit::Type::kHard;
    } else if (w[1] != "-") {
      continue;
    }
    limit.item = std::string(w[2]);
    out[LimitKey(limit)] = std::string(w[3]);
  }
  return out;
}

std::string NormalizeBlanks(std::string_view text) {
  std::string out;
  for (std::string_view word : Words(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

StatusOr<std::optional<std::string>> ReadOptionalFile(const std::string& path) {
  StatusOr<std::string> text = ReadKernelFile(path);
  if (text.ok()) return std::optional<std::string>(std::move(*text));
  if (text.status().code() == StatusCode::kNotFound)
    return std::optional<std::string>();
  return text.status();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const std::filesystem::path target(path);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) {
    return ErrnoError(ec.value(),
                      "create directory " + target.parent_path().string());
  }
  const std::string temp = path + ".lens-tmp";
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "create " + temp);
  Status st = WriteAll(fd, content, temp);
  // fchmod: the umask must not make a limits file unreadable to logins.
  if (st.ok() && ::fchmod(fd, 0644) != 0)
    st = ErrnoError(errno, "chmod " + temp);
  if (st.ok() && ::fsync(fd) != 0) st = ErrnoError(errno, "fsync " + temp);
  if (::close(fd) != 0 && st.ok()) st = ErrnoError(errno, "close " + temp);
  if (st.ok() && ::rename(temp.c_str(), path.c_str()) != 0)
    st = ErrnoError(errno, "rename " + temp + " to " + path);
  if (!st.ok()) {
    ::unlink(temp.c_str());
    return st;
  }
  // The rename itself survives a crash only once the directory is synced.
  const int dir =
      ::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return OkStatus();
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return ErrnoError(errno, "remove " + path);
  return OkStatus();
}

Status WriteSysctl(const std::string& path, std::string_view value) {
  // O_TRUNC does nothing to a procfs file and keeps a fixture file exact.
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open " + path);
  Status st = WriteAll(fd, std::string(value) + "\n", path);
  if (::close(fd) != 0 && st.ok()) st = ErrnoError(errno, "close " + path);
  return st;
}

}  // namespace lens::tuner
