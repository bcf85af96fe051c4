// Listening TCP sockets from /proc/net/tcp and tcp6.
#include <charconv>
#include <cstring>
#include <string>

#include "core/kernel_file.h"
#include "lens/flow_policy.h"

namespace lens {
namespace {

constexpr std::string_view kListen = "0A";
constexpr size_t kMaxTableBytes = size_t{64} << 20;

bool ParseHex32(std::string_view text, uint32_t* out) {
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

// "0100007F:1F90" (IPv4) or 32 hex digits + ":port" (IPv6). The kernel prints
// each 32-bit word of the address as a host-order integer (%08X), so on a
// little-endian machine the bytes of each word appear reversed.
bool ParseEndpoint(std::string_view text, bool v6, IpAddress* addr,
                   uint16_t* port) {
  const size_t colon = text.find(':');
  const size_t hex_len = v6 ? 32 : 8;
  if (colon != hex_len) return false;
  uint32_t p;
  if (!ParseHex32(text.substr(colon + 1), &p) || p > 0xffff) return false;
  *port = static_cast<uint16_t>(p);
  addr->family = v6 ? 6 : 4;
  addr->bytes = {};
  for (size_t w = 0; w < hex_len / 8; ++w) {
    uint32_t word;
    if (!ParseHex32(text.substr(w * 8, 8), &word)) return false;
    std::memcpy(addr->bytes.data() + w * 4, &word, 4);  // host order
  }
  return true;
}

Status ParseTable(std::string_view text, bool v6, std::string_view name,
                  std::vector<std::pair<IpAddress, uint16_t>>* out) {
  size_t line_no = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view()
                                         : text.substr(eol + 1);
    ++line_no;
    if (line_no == 1 || TrimKernelValue(line).empty()) continue;  // header
    // Fields: sl local_address rem_address st ...
    std::string_view fields[4];
    std::string_view rest = line;
    for (auto& f : fields) {
      rest = TrimKernelValue(rest);
      size_t sp = rest.find_first_of(" \t");
      f = rest.substr(0, sp);
      rest =
          sp == std::string_view::npos ? std::string_view() : rest.substr(sp);
    }
    IpAddress addr;
    uint16_t port;
    if (fields[3].empty() || !ParseEndpoint(fields[1], v6, &addr, &port)) {
      return InternalError(std::string(name) + ":" + std::to_string(line_no) +
                           ": unexpected line \"" + std::string(line) + "\"");
    }
    if (fields[3] == kListen) out->emplace_back(addr, port);
  }
  return OkStatus();
}

}  // namespace

StatusOr<ListeningSockets> ListeningSockets::Parse(std::string_view tcp,
                                                   std::string_view tcp6) {
  std::vector<std::pair<IpAddress, uint16_t>> found;
  LENS_RETURN_IF_ERROR(ParseTable(tcp, false, "net/tcp", &found));
  LENS_RETURN_IF_ERROR(ParseTable(tcp6, true, "net/tcp6", &found));
  ListeningSockets s;
  for (auto& [addr, port] : found) s.listeners_.push_back({addr, port});
  return s;
}

StatusOr<ListeningSockets> ListeningSockets::Read(
    const std::string& proc_root) {
  LENS_ASSIGN_OR_RETURN(std::string tcp,
                        ReadKernelFile(proc_root + "/net/tcp", kMaxTableBytes));
  std::string tcp6;
  if (auto t6 = ReadKernelFile(proc_root + "/net/tcp6", kMaxTableBytes);
      t6.ok()) {
    tcp6 = std::move(*t6);
  } else if (t6.status().code() != StatusCode::kNotFound) {
    return t6.status();
  }
  StatusOr<ListeningSockets> s = Parse(tcp, tcp6);
  if (!s.ok()) return s.status().WithContext(proc_root);
  return s;
}

bool ListeningSockets::IsListening(const IpAddress& local,
                                   uint16_t port) const {
  const IpAddress l = local.Unmapped();
  for (const Listener& s : listeners_) {
    if (s.port != port) continue;
    if (s.address.IsUnspecified()) {
      // :: also accepts IPv4 (unless IPV6_V6ONLY, which /proc does not show).
      if (s.address.family == 6 || l.family == 4) return true;
    }
    if (s.address.Unmapped() == l) return true;
  }
  return false;
}

FlowDirection ListeningSockets::DirectionOf(const IpAddress& local,
                                            uint16_t port) const {
  return IsListening(local, port) ? FlowDirection::kIngress
                                  : FlowDirection::kEgress;
}

}  // namespace lens
