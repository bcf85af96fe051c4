// Listening sockets and peer addresses of the HTTP server.
#ifndef LENS_HTTP_SOCKET_H_
#define LENS_HTTP_SOCKET_H_

#include <sys/socket.h>

#include <string>

#include "http/listen_address.h"
#include "lens/status.h"

namespace lens::http {

// The client address without port; an IPv4 client of a dual-stack socket as
// plain IPv4.
std::string PeerAddress(const sockaddr_storage& addr);
// Raises the soft RLIMIT_NOFILE to fit max_connections (often 1024).
void RaiseFileLimit(int max_connections);
// A non-blocking listening socket for `address` (numeric or a name of this
// machine), with the bound port written back. `text` names it in errors.
StatusOr<int> Listen(ListenAddress* address, const std::string& text);

}  // namespace lens::http

#endif  // LENS_HTTP_SOCKET_H_
