// Known TCP traffic over loopback for the flow probe's tests and
// benchmarks: a server on 127.0.0.1 or ::1 (a free port) and sequential
// client connections, each sending exactly `request` bytes and receiving
// exactly `reply` bytes; the server closes first.
#ifndef LENS_TEST_SUPPORT_LOOPBACK_TRAFFIC_H_
#define LENS_TEST_SUPPORT_LOOPBACK_TRAFFIC_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace lens::test {

// A TCP port on 127.0.0.1 that was free a moment ago, for servers a test
// starts as child processes: a random one below the kernel's range for
// outgoing connections (which another test's client could take before the
// child binds it), or from bind(0) where that range leaves no room.
int FreeLoopbackPort();

class LoopbackTraffic {
 public:
  // `family`: "ipv4" or "ipv6". Listens at once; check ok().
  explicit LoopbackTraffic(const std::string& family);
  ~LoopbackTraffic();
  LoopbackTraffic(const LoopbackTraffic&) = delete;
  LoopbackTraffic& operator=(const LoopbackTraffic&) = delete;

  bool ok() const { return listen_fd_ >= 0; }
  const std::string& error() const { return error_; }
  uint16_t port() const { return port_; }

  // Runs `connections` connections one after another; false with error()
  // on any socket failure or short transfer.
  bool Run(int connections, size_t request, size_t reply);

 private:
  bool Serve(int connections, size_t request, size_t reply);
  bool Connect(size_t request, size_t reply);

  bool v6_ = false;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::string error_;
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_LOOPBACK_TRAFFIC_H_
