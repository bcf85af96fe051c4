// "host:port" listen addresses, shared by every HTTP listener.
#ifndef LENS_HTTP_LISTEN_ADDRESS_H_
#define LENS_HTTP_LISTEN_ADDRESS_H_

#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens::http {

struct ListenAddress {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::" (brackets removed)
  int port = 0;      // 0..65535; 0 = any free port
};

// Accepts "host:port", ":port" (all interfaces, IPv4) and "[v6]:port".
// InvalidArgument naming the text otherwise.
StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace lens::http

#endif  // LENS_HTTP_LISTEN_ADDRESS_H_
