// The bytes of responses, and the bearer check, of the HTTP server.
#ifndef LENS_HTTP_WIRE_H_
#define LENS_HTTP_WIRE_H_

#include <string>
#include <string_view>

#include "http/http.h"

namespace lens::http {

// "Not Found" for 404, ...
const char* Reason(int status);
// Header values with CR/LF removed, so a handler cannot split the response.
std::string HeaderSafe(std::string_view s);
// The whole HTTP/1.1 response; no body for HEAD.
std::string Serialize(const HttpResponse& r, bool head_only, bool keep_alive);
// An error response with the REST envelope.
std::string ErrorBytes(int status, std::string_view message, bool keep_alive,
                       bool head_only = false);
// "Bearer <token>" with the scheme in any case and one or more spaces; the
// token compared in constant time.
bool Authorized(std::string_view header, std::string_view token);

}  // namespace lens::http

#endif  // LENS_HTTP_WIRE_H_
