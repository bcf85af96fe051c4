#include "http/listen_address.h"

#include <charconv>

namespace lens::http {

StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("listen address \"" + std::string(text) +
                                "\": " + std::string(why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("expected host:port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of("[]:") != std::string_view::npos) {
    return bad("IPv6 hosts must be in brackets, e.g. [::1]:8989");
  }
  int value = -1;
  auto [end, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() ||
      value < 0 || value > 65535) {
    return bad("port must be in 0..65535");
  }
  ListenAddress out;
  out.host = host.empty() ? "0.0.0.0" : std::string(host);
  out.port = value;
  return out;
}

}  // namespace lens::http
