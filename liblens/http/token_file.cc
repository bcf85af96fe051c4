#include <string>

#include "core/kernel_file.h"
#include "http/http.h"

namespace lens {

StatusOr<std::string> ReadBearerTokenFile(const std::string& path,
                                          std::string_view what) {
  StatusOr<std::string> text = ReadKernelFile(path, size_t{64} << 10);
  if (!text.ok()) return text.status().WithContext(what);
  std::string_view token = *text;
  const size_t begin = token.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) {
    return InvalidArgumentError(std::string(what) + ": " + path + " is empty");
  }
  token = token.substr(begin, token.find_last_not_of(" \t\r\n") + 1 - begin);
  return std::string(token);
}

}  // namespace lens
