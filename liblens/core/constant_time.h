// Comparing secrets (bearer tokens) in time that depends on the lengths only,
// never on where the first difference is. Used by every server that checks
// a token (HTTP, gRPC).
#ifndef LENS_CORE_CONSTANT_TIME_H_
#define LENS_CORE_CONSTANT_TIME_H_

#include <string_view>

namespace lens {

// True when `given` equals `secret`; an empty secret matches nothing.
inline bool ConstantTimeEquals(std::string_view given,
                               std::string_view secret) {
  if (secret.empty()) return false;
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ secret[i % secret.size()]);
  }
  return diff == 0;
}

}  // namespace lens

#endif  // LENS_CORE_CONSTANT_TIME_H_
