// KubeletGet: one GET against the kubelet's API (node/kubelet_http.h: a
// socket, OpenSSL for https). The bearer token and the client certificate
// are re-read on every call (projected service-account tokens and kubelet
// client certificates rotate); the token never appears in an error message.
#include <algorithm>
#include <string>
#include <vector>

#include "core/kernel_file.h"
#include "kubelet/kubelet_http.h"
#include "lens/kubelet.h"
#include "lens/version.h"

namespace lens {
namespace {

constexpr size_t kMaxTokenBytes = 64 * 1024;
constexpr size_t kBodyStartBytes = 256;

// The token file's content, trimmed. Errors name the file, never the token.
StatusOr<std::string> ReadToken(const std::string& path) {
  StatusOr<std::string> text = ReadKernelFile(path, kMaxTokenBytes);
  if (!text.ok()) return text.status().WithContext("kubelet token file");
  std::string_view token = *text;
  const std::string_view kSpace = " \t\r\n";
  token.remove_prefix(std::min(token.size(), token.find_first_not_of(kSpace)));
  token = token.substr(0, token.find_last_not_of(kSpace) + 1);
  if (token.empty()) {
    return InvalidArgumentError("kubelet token file " + path + " is empty");
  }
  for (char c : token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgumentError("kubelet token file " + path +
                                  ": the token contains control characters");
    }
  }
  return std::string(token);
}

// The start of an error body for a message: printable ASCII only, with the
// token blanked in case the server echoes request headers back.
std::string BodyStart(std::string body, const std::string& token) {
  if (!token.empty()) {
    for (size_t at; (at = body.find(token)) != std::string::npos;) {
      body.replace(at, token.size(), "<redacted>");
    }
  }
  std::string out;
  for (char c : body.substr(0, kBodyStartBytes)) {
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  if (body.size() > kBodyStartBytes) out += "...";
  return out;
}

StatusOr<std::string> MapResponse(int status, std::string body,
                                  const std::string& token,
                                  const std::string& url) {
  if (status >= 200 && status < 300) return body;
  const std::string what = "GET " + url + ": HTTP " + std::to_string(status);
  if (status == 401 || status == 403) {
    return PermissionDeniedError(
        what + (status == 401
                    ? " (token or client certificate missing, invalid or "
                      "expired)"
                    : " (the token's identity may not read this)"));
  }
  return Status(StatusCode::kUnknown,
                what + ": " + BodyStart(std::move(body), token));
}

}  // namespace

Status KubeletOptions::Validate() const {
  if (url.empty()) return InvalidArgumentError("kubelet url is empty");
  LENS_RETURN_IF_ERROR(
      kubelet::ParseHttpUrl(url).status().WithContext("kubelet url"));
  if (timeout.count() <= 0) {
    return InvalidArgumentError("kubelet timeout must be > 0");
  }
  if (client_cert_file.empty() != client_key_file.empty()) {
    return InvalidArgumentError(
        "kubelet client certificate and key files must be set together (got " +
        std::string(client_cert_file.empty() ? "only the key"
                                             : "only the certificate") +
        ")");
  }
  return kubelet::CheckTlsFiles(*this);
}

StatusOr<std::string> KubeletGet(const KubeletOptions& options,
                                 std::string_view path) {
  if (options.url.empty()) {
    return InvalidArgumentError("KubeletGet: KubeletOptions.url is empty");
  }
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError(
        "KubeletGet: KubeletOptions.timeout must be > 0");
  }
  std::string url = options.url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (!path.empty() && path.front() != '/') url += '/';
  url += path;

  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return InvalidArgumentError(
        "KubeletGet: client_cert_file and client_key_file must be set "
        "together");
  }
  std::string token;
  if (!options.token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(token, ReadToken(options.token_file));
  }
  std::vector<std::string> headers = {"Accept: application/json",
                                      "User-Agent: lens/" LENS_VERSION_STRING};
  if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
  LENS_ASSIGN_OR_RETURN(kubelet::KubeletHttpResponse response,
                        kubelet::HttpGet(options, url, headers));
  return MapResponse(response.status, std::move(response.body), token, url);
}

}  // namespace lens
