#include "core/redact.h"

#include <array>
#include <cctype>

namespace lens {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool IsSecretKey(std::string_view key) {
  return IEquals(key, "password") || IEquals(key, "sslpassword");
}

// The end of the value starting at `i`: a quoted keyword value ends at its
// closing quote, others at '&' (URL query) or a blank (keyword form).
size_t ValueEnd(const std::string& s, size_t i, bool keyword_form) {
  if (keyword_form && i < s.size() && s[i] == '\'') {
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] == '\\') {
        ++j;
      } else if (s[j] == '\'') {
        return j + 1;
      }
    }
    return s.size();
  }
  size_t j = i;
  while (j < s.size() && s[j] != '&' && s[j] != '#' &&
         !(keyword_form && std::isspace(static_cast<unsigned char>(s[j])))) {
    ++j;
  }
  return j;
}

}  // namespace

std::string RedactCredentials(std::string_view url) {
  std::string s(url);
  const size_t scheme = s.find("://");
  const bool is_url = scheme != std::string::npos;
  if (is_url) {
    const size_t start = scheme + 3;
    const size_t query = s.find('?', start);
    const size_t at = s.rfind('@', query == std::string::npos ? s.npos : query);
    if (at != std::string::npos && at > start) {
      const size_t colon = s.find(':', start);
      if (colon != std::string::npos && colon < at)
        s.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // key=value pairs: after '?' or '&' in a URL, after a blank or at the start
  // in keyword form.
  for (size_t eq = s.find('='); eq != std::string::npos;
       eq = s.find('=', eq + 1)) {
    size_t key_end = eq;  // keyword form allows "password = x"
    while (!is_url && key_end > 0 && s[key_end - 1] == ' ') --key_end;
    size_t k = key_end;
    while (k > 0 && (std::isalnum(static_cast<unsigned char>(s[k - 1])) ||
                     s[k - 1] == '_')) {
      --k;
    }
    const bool boundary = k == 0 || s[k - 1] == '?' || s[k - 1] == '&' ||
                          std::isspace(static_cast<unsigned char>(s[k - 1]));
    if (!boundary || !IsSecretKey(std::string_view(s).substr(k, key_end - k)))
      continue;
    size_t v = eq + 1;
    while (!is_url && v < s.size() && s[v] == ' ') ++v;
    const size_t end = ValueEnd(s, v, !is_url);
    s.replace(v, end - v, "***");
  }
  return s;
}

std::string RedactedUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t host = scheme == std::string_view::npos ? 0 : scheme + 3;
  std::string_view rest = url.substr(host);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t path = rest.find('/');
  const size_t at = rest.substr(0, path).rfind('@');
  if (at != std::string_view::npos) rest.remove_prefix(at + 1);
  return std::string(url.substr(0, host)) + std::string(rest);
}

}  // namespace lens
