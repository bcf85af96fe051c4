#include "victoria_metrics.h"

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "command.h"
#include "loopback_traffic.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

std::string Encode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Installed(const char* path) { return fs::exists(path) ? path : ""; }

}  // namespace

std::string VictoriaMetrics::Binary() {
  return Installed("/usr/bin/victoria-metrics");
}
std::string VictoriaMetrics::AgentBinary() {
  return Installed("/usr/bin/vmagent");
}

StatusOr<std::unique_ptr<VictoriaMetrics>> VictoriaMetrics::Start() {
  std::unique_ptr<VictoriaMetrics> vm(new VictoriaMetrics());
  vm->binary_ = Binary();
  if (vm->binary_.empty()) {
    return NotFoundError("victoria-metrics is not installed");
  }
  char tmpl[] = "/tmp/lens-vm-XXXXXX";
  if (!::mkdtemp(tmpl)) return InternalError("mkdtemp failed");
  vm->dir_ = tmpl;
  vm->port_ = FreeLoopbackPort();
  vm->args_ = {"-storageDataPath=" + vm->dir_ + "/data",
               "-retentionPeriod=100y", "-search.latencyOffset=0s",
               "-search.disableCache", "-loggerLevel=WARN"};
  LENS_RETURN_IF_ERROR(vm->Launch());
  return vm;
}

StatusOr<std::unique_ptr<VictoriaMetrics>> VictoriaMetrics::StartAgent(
    const std::vector<std::string>& args) {
  std::unique_ptr<VictoriaMetrics> vm(new VictoriaMetrics());
  vm->binary_ = AgentBinary();
  if (vm->binary_.empty()) return NotFoundError("vmagent is not installed");
  char tmpl[] = "/tmp/lens-vmagent-XXXXXX";
  if (!::mkdtemp(tmpl)) return InternalError("mkdtemp failed");
  vm->dir_ = tmpl;
  vm->port_ = FreeLoopbackPort();
  vm->args_ = args;
  vm->args_.push_back("-remoteWrite.tmpDataPath=" + vm->dir_ + "/queue");
  vm->args_.push_back("-loggerLevel=WARN");
  LENS_RETURN_IF_ERROR(vm->Launch());
  return vm;
}

Status VictoriaMetrics::Launch() {
  std::vector<std::string> argv = {
      binary_, "-httpListenAddr=127.0.0.1:" + std::to_string(port_)};
  argv.insert(argv.end(), args_.begin(), args_.end());
  pid_ = Spawn(argv, dir_ + "/log", true, /*append=*/true);
  if (pid_ < 0) return InternalError("fork failed");
  return WaitHealthy();
}

Status VictoriaMetrics::WaitHealthy() {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return InternalError(binary_ + " exited (" + Describe(status) +
                           "): " + log());
    }
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(std::chrono::milliseconds(200));
    auto res = client.Get("/health");
    if (res && res->status == 200) return OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return DeadlineExceededError(binary_ + " not healthy after 30 s: " + log());
}

void VictoriaMetrics::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Status VictoriaMetrics::StartAgain() {
  Stop();
  return Launch();
}

VictoriaMetrics::~VictoriaMetrics() {
  Stop();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string VictoriaMetrics::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}
std::string VictoriaMetrics::write_url() const {
  return url() + "/api/v1/write";
}

std::string VictoriaMetrics::log() const {
  const std::string text = ReadFile(dir_ + "/log");
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

StatusOr<std::string> VictoriaMetrics::Get(
    const std::string& path_and_query) const {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(std::chrono::seconds(30));
  auto res = client.Get(path_and_query);
  if (!res) {
    return UnavailableError("GET " + path_and_query + ": " +
                            httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    return InternalError("GET " + path_and_query + ": " +
                         std::to_string(res->status) + " " + res->body);
  }
  return res->body;
}

StatusOr<std::string> VictoriaMetrics::Post(
    const std::string& path, const std::string& body,
    const std::string& content_type) const {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(std::chrono::seconds(30));
  auto res = client.Post(path, body, content_type);
  if (!res) {
    return UnavailableError("POST " + path + ": " +
                            httplib::to_string(res.error()));
  }
  if (res->status < 200 || res->status >= 300) {
    return InternalError("POST " + path + ": " + std::to_string(res->status) +
                         " " + res->body);
  }
  return res->body;
}

StatusOr<std::string> VictoriaMetrics::Export(const std::string& match) const {
  LENS_RETURN_IF_ERROR(Get("/internal/force_flush").status());
  return Get("/api/v1/export?match[]=" + Encode(match));
}

}  // namespace lens::test
