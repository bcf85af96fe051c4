// Remote write 1.0 on the wire: what a real Prometheus sends decodes to the
// series it scraped; encoding round-trips byte for byte; bad payloads are
// refused with what was wrong, before anything large is allocated.
#include "telemetry/remote_write.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <snappy.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "loopback_traffic.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::map<std::string, std::string> LabelMap(const RemoteWriteRequest& r,
                                            const WireSeries& s) {
  std::map<std::string, std::string> out;
  for (const WireLabel& l : r.LabelsOf(s)) {
    out[std::string(l.name)] = std::string(l.value);
  }
  return out;
}

TEST(RemoteWriteTest, EncodedRequestsDecodeAndReencodeByteForByte) {
  RemoteWriteEncoder enc;
  const WireLabel a[] = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                         {"gpu", "0"},
                         {"pod", "llama-70b-worker-0"}};
  const WireSample sa[] = {{100, 1795624473000}, {97.5, 1795624474000}};
  const WireLabel b[] = {{"__name__", "up"}, {"job", ""}};
  const WireSample sb[] = {{std::nan(""), -5}, {-INFINITY, 0}};
  // An exemplar (field 3) the processor carries through untouched.
  const std::string exemplar = std::string("\x1a\x05\x11", 3) + "ABCD";
  enc.AddSeries(a, sa);
  enc.AddSeries(b, sb, exemplar);
  const std::string metadata("\x1a\x04\x08\x02\x12\x00", 6);  // field 3
  enc.AddExtra(metadata);
  const std::string proto = enc.proto();
  const std::string body = enc.Finish();
  EXPECT_EQ(enc.series(), 0u);

  RemoteWriteRequest r;
  ASSERT_TRUE(DecodeRemoteWrite(body, {}, &r).ok());
  ASSERT_EQ(r.series.size(), 2u);
  EXPECT_EQ(LabelMap(r, r.series[0]).at("pod"), "llama-70b-worker-0");
  EXPECT_EQ(LabelMap(r, r.series[1]).at("job"), "");
  ASSERT_EQ(r.SamplesOf(r.series[0]).size(), 2u);
  EXPECT_EQ(r.SamplesOf(r.series[0])[1].value, 97.5);
  EXPECT_EQ(r.SamplesOf(r.series[0])[1].timestamp_ms, 1795624474000);
  EXPECT_TRUE(std::isnan(r.SamplesOf(r.series[1])[0].value));
  EXPECT_EQ(r.SamplesOf(r.series[1])[0].timestamp_ms, -5);
  EXPECT_EQ(r.ExtraOf(r.series[1]), exemplar);
  EXPECT_EQ(r.extra, metadata);

  RemoteWriteEncoder again;
  for (const WireSeries& s : r.series) {
    again.AddSeries(r.LabelsOf(s), r.SamplesOf(s), r.ExtraOf(s));
  }
  again.AddExtra(r.extra);
  EXPECT_EQ(again.proto(), proto);
  // Decoding into the same request again reuses it and gives the same.
  ASSERT_TRUE(DecodeRemoteWrite(again.Finish(), {}, &r).ok());
  EXPECT_EQ(r.series.size(), 2u);
  EXPECT_EQ(r.labels.size(), 5u);
}

TEST(RemoteWriteTest, BadPayloadsAreRefusedWithWhatIsWrong) {
  RemoteWriteRequest r;
  RemoteWriteLimits limits;
  // Not snappy.
  Status st = DecodeRemoteWrite("\xff\xff\xff\xff\xff\xff", limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  // A header declaring 4 GiB: refused before allocating.
  std::string huge;
  for (uint64_t v = uint64_t{4} << 30; v >= 0x80; v >>= 7) {
    huge.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  huge.push_back(0x10);
  huge += "garbage";
  st = DecodeRemoteWrite(huge, limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st;
  EXPECT_NE(st.message().find("declares 4294967296"), std::string::npos) << st;
  EXPECT_LT(r.buffer.capacity(), size_t{1} << 20);
  // A body over the limit.
  limits.max_compressed_bytes = 16;
  EXPECT_EQ(DecodeRemoteWrite(std::string(17, 'x'), limits, &r).code(),
            StatusCode::kResourceExhausted);
  limits = {};
  // Valid snappy, corrupt inside.
  std::string ok_body;
  snappy::Compress("hello world, hello world", 24, &ok_body);
  ok_body.back() ^= 0x55;
  ok_body.resize(ok_body.size() - 2);
  EXPECT_EQ(DecodeRemoteWrite(ok_body, limits, &r).code(),
            StatusCode::kInvalidArgument);
  // Truncated protobuf: the offset is named.
  RemoteWriteEncoder enc;
  const WireLabel l[] = {{"__name__", "up"}};
  const WireSample s[] = {{1, 2}};
  enc.AddSeries(l, s);
  const std::string proto = enc.proto();
  st = DecodeWriteRequest(proto.substr(0, proto.size() - 3), limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("at byte"), std::string::npos) << st;
  // A series without labels.
  st = DecodeWriteRequest(std::string("\x0a\x00", 2), limits, &r);
  EXPECT_NE(st.message().find("without labels"), std::string::npos) << st;
  // A million labels on one series: refused at the limit.
  RemoteWriteEncoder many;
  std::vector<std::string> names;
  std::vector<WireLabel> labels;
  for (int i = 0; i < 1000000; ++i) names.push_back("l" + std::to_string(i));
  for (const std::string& n : names) labels.push_back({n, "v"});
  many.AddSeries(labels, s);
  st = DecodeRemoteWrite(many.Finish(), limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("more than 1024 labels"), std::string::npos)
      << st;
  // Too many samples in one request.
  limits.max_samples = 1;
  const WireSample two[] = {{1, 2}, {3, 4}};
  RemoteWriteEncoder samples;
  samples.AddSeries(l, two);
  EXPECT_NE(DecodeRemoteWrite(samples.Finish(), limits, &r)
                .message()
                .find("more than 1 samples"),
            std::string::npos);
}

// Bodies built to cost more than they weigh: the decoder's cost follows
// the bytes really sent, whatever they declare.
TEST(RemoteWriteTest, BombsAreRefusedForTheBytesReallySent) {
  RemoteWriteRequest r;
  const RemoteWriteLimits limits;
  // 9 bytes declaring 31 MiB (under the limit): refused before the buffer.
  std::string tiny;
  for (uint64_t v = uint64_t{31} << 20; v >= 0x80; v >>= 7)
    tiny.push_back(static_cast<char>((v & 0x7f) | 0x80));
  tiny.push_back(0x0f);
  tiny.resize(9, '\0');
  Status st = DecodeRemoteWrite(tiny, limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("more than 9 bytes can hold"), std::string::npos)
      << st;
  EXPECT_LT(r.buffer.capacity(), size_t{1} << 20);
  // 30 MiB of zeros (1.4 MB on the wire): protobuf field 0 is no field.
  const std::string zeros(size_t{30} << 20, '\0');
  std::string body;
  snappy::Compress(zeros.data(), zeros.size(), &body);
  ASSERT_LT(body.size(), size_t{2} << 20);
  st = DecodeRemoteWrite(body, limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("field number 0"), std::string::npos) << st;
  // A million empty samples on one series (2 MB): 16 MB of decoded samples
  // from 2 MB of request is refused, not stored.
  std::string series = std::string("\x0a\x06\x0a\x01x\x12\x01y", 8);
  for (int i = 0; i < 1000000; ++i) series += std::string("\x12\x00", 2);
  std::string proto = "\x0a";
  for (uint64_t v = series.size();; v >>= 7) {
    if (v < 0x80) {
      proto.push_back(static_cast<char>(v));
      break;
    }
    proto.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  proto += series;
  st = DecodeWriteRequest(proto, limits, &r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("empty messages"), std::string::npos) << st;
}

// What every remote-write target refuses is refused here, naming it, and
// never forwarded.
TEST(RemoteWriteTest, LabelsTargetsWouldRefuseAreRefused) {
  RemoteWriteRequest r;
  const WireSample s[] = {{1, 2}};
  const std::pair<std::vector<WireLabel>, std::string> cases[] = {
      {{{"", "x"}}, "a label without a name"},
      {{{"__name__", "up"}, {"pod", "bad\xff\xfe"}}, "not valid UTF-8"},
      {{{"__name__", "up"}, {"pod", std::string_view("a\0b", 3)}},
       "holds a NUL"},
      {{{"__name__", "up"}, {"pod", "\xed\xa0\x80"}}, "not valid UTF-8"},
      {{{"__name__", "up"}, {"pod", "\xc0\xaf"}}, "not valid UTF-8"}};
  for (const auto& [labels, says] : cases) {
    RemoteWriteEncoder enc;
    enc.AddSeries(labels, s);
    const Status st = DecodeRemoteWrite(enc.Finish(), {}, &r);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << says;
    EXPECT_NE(st.message().find(says), std::string::npos) << st;
  }
  // Valid multi-byte UTF-8 is fine.
  RemoteWriteEncoder enc;
  const WireLabel ok[] = {{"__name__", "up"},
                          {"pod", "trainer-\xc3\xa9-\xf0\x9f\x9a\x80"}};
  enc.AddSeries(ok, s);
  EXPECT_TRUE(DecodeRemoteWrite(enc.Finish(), {}, &r).ok());
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A real Prometheus scrapes exporter-shaped fixtures (dcgm-exporter, AMD
// device-metrics-exporter) and remote-writes to a capture server: every
// body decodes, and the series carry the exporters' labels and values.
TEST(RemoteWriteTest, DecodesWhatARealPrometheusSends) {
  const std::string prometheus = "/usr/bin/prometheus";
  if (!fs::exists(prometheus)) {
    GTEST_SKIP() << "prometheus not installed (scripts/install-deps.sh)";
  }
  const fs::path dir =
      fs::temp_directory_path() / ("lens-rw-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fixtures = std::string(LENS_FIXTURES_DIR) + "/telemetry/";
  const std::string exposition =
      Slurp(fixtures + "dcgm_exporter.prom") +
      Slurp(fixtures + "amd_device_metrics_exporter.prom");
  httplib::Server exporter;
  exporter.Get("/metrics", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(exposition, "text/plain; version=0.0.4");
  });
  std::mutex mu;
  std::vector<std::string> bodies;
  std::map<std::string, std::string> headers;
  httplib::Server receiver;
  receiver.Post("/api/v1/write",
                [&](const httplib::Request& req, httplib::Response& r) {
                  std::lock_guard lock(mu);
                  bodies.push_back(req.body);
                  for (const char* h : {"Content-Encoding", "Content-Type",
                                        "X-Prometheus-Remote-Write-Version"}) {
                    headers[h] = req.get_header_value(h);
                  }
                  r.status = 204;
                });
  const int exporter_port = exporter.bind_to_any_port("127.0.0.1");
  const int receiver_port = receiver.bind_to_any_port("127.0.0.1");
  std::thread t1([&] { exporter.listen_after_bind(); });
  std::thread t2([&] { receiver.listen_after_bind(); });
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: gpu\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << exporter_port << "']\n"
      << "remote_write:\n  - url: http://127.0.0.1:" << receiver_port
      << "/api/v1/write\n    queue_config:\n      batch_send_deadline: 1s\n";
  const int prom_port = test::FreeLoopbackPort();
  // Built before fork(): the servers' threads may hold the allocator's lock,
  // so the child only calls async-signal-safe functions.
  const std::string config =
      "--config.file=" + (dir / "prometheus.yml").string();
  const std::string data = "--storage.tsdb.path=" + (dir / "data").string();
  const std::string listen =
      "--web.listen-address=127.0.0.1:" + std::to_string(prom_port);
  const int log = ::open((dir / "prometheus.log").c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execl(prometheus.c_str(), "prometheus", config.c_str(), data.c_str(),
            listen.c_str(), "--log.level=warn", nullptr);
    ::_exit(127);
  }
  ::close(log);
  std::map<std::string, std::map<std::string, std::string>> seen;  // by name
  std::map<std::string, double> values;
  size_t decoded = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end &&
         (!seen.count("DCGM_FI_DEV_POWER_USAGE") ||
          !seen.count("gpu_power_usage"))) {
    std::this_thread::sleep_for(milliseconds(200));
    std::lock_guard lock(mu);
    for (; decoded < bodies.size(); ++decoded) {
      RemoteWriteRequest r;
      Status st = DecodeRemoteWrite(bodies[decoded], {}, &r);
      ASSERT_TRUE(st.ok()) << st;
      for (const WireSeries& s : r.series) {
        auto labels = LabelMap(r, s);
        const std::string name = labels["__name__"];
        if (labels["pod"].empty()) continue;
        seen[name] = labels;
        ASSERT_FALSE(r.SamplesOf(s).empty());
        values[name] = r.SamplesOf(s).back().value;
        EXPECT_GT(r.SamplesOf(s).back().timestamp_ms, 1700000000000);
      }
    }
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  exporter.stop();
  receiver.stop();
  t1.join();
  t2.join();
  ASSERT_TRUE(seen.count("DCGM_FI_DEV_POWER_USAGE"))
      << Slurp(dir / "prometheus.log");
  EXPECT_EQ(headers["Content-Encoding"], "snappy");
  EXPECT_EQ(headers["Content-Type"], "application/x-protobuf");
  EXPECT_EQ(headers["X-Prometheus-Remote-Write-Version"], "0.1.0");
  const auto& dcgm = seen["DCGM_FI_DEV_GPU_UTIL"];
  EXPECT_EQ(dcgm.at("pod"), "llama-70b-worker-0");
  EXPECT_EQ(dcgm.at("namespace"), "ml");
  EXPECT_EQ(dcgm.at("UUID"), "GPU-b66ea1a7-1f45-5cad-ffaf-d115903e98bf");
  EXPECT_EQ(dcgm.at("job"), "gpu");  // added by the scrape
  EXPECT_EQ(values["DCGM_FI_DEV_GPU_UTIL"], 100);
  EXPECT_EQ(values["DCGM_FI_DEV_POWER_USAGE"], 612.345);
  const auto& amd = seen["gpu_gfx_activity"];
  EXPECT_EQ(amd.at("serial_number"), "692353001198");
  EXPECT_EQ(amd.at("hostname"), "node-a");
  EXPECT_EQ(values["gpu_power_usage"], 731);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lens::telemetry
