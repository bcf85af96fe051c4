// ReadNodeTokensFile: the per-node tokens of the container event stream.
#include <cctype>
#include <set>

#include "container_events/container_events.h"
#include "core/kernel_file.h"

namespace lens {
namespace {

constexpr size_t kMaxFileBytes = size_t{4} << 20;
constexpr size_t kMinTokenBytes = 16;
constexpr size_t kMaxNodeBytes = 253;  // the store's key limit

bool IsNodeName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNodeBytes) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '-' && c != '.' && c != '_') return false;
  }
  return true;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The blank-separated words of `line`.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    const size_t begin = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > begin) words.push_back(line.substr(begin, i - begin));
  }
  return words;
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ReadNodeTokensFile(
    const std::string& path, std::string_view what) {
  StatusOr<std::string> text = ReadKernelFile(path, kMaxFileBytes);
  if (!text.ok()) return text.status().WithContext(what);
  std::map<std::string, std::string> tokens;
  std::set<std::string_view> seen;
  std::string_view rest = *text;
  int line_no = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? "" : rest.substr(nl + 1);
    ++line_no;
    const std::vector<std::string_view> words = Words(line);
    if (words.empty() || words[0][0] == '#') continue;
    const std::string where = std::string(what) + ": " + path + " line " +
                              std::to_string(line_no) + ": ";
    if (words.size() != 2) {
      return InvalidArgumentError(where + "expected \"NODE TOKEN\", got " +
                                  std::to_string(words.size()) + " words");
    }
    if (!IsNodeName(words[0])) {
      return InvalidArgumentError(
          where + "not a node name (1-253 letters, digits, '-', '.', '_')");
    }
    const std::string node(words[0]);
    if (words[1].size() < kMinTokenBytes) {
      return InvalidArgumentError(where + "the token of node '" + node +
                                  "' is shorter than " +
                                  std::to_string(kMinTokenBytes) + " bytes");
    }
    if (tokens.count(node) != 0) {
      return InvalidArgumentError(where + "node '" + node + "' listed twice");
    }
    if (!seen.insert(words[1]).second) {
      return InvalidArgumentError(where + "node '" + node +
                                  "' has the token of another node; each "
                                  "node needs its own");
    }
    tokens.emplace(node, std::string(words[1]));
  }
  if (tokens.empty()) {
    return InvalidArgumentError(std::string(what) + ": " + path +
                                " lists no node tokens");
  }
  return tokens;
}

}  // namespace lens
