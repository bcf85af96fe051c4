// KubeletGet with X.509 client authentication against a local HTTPS server
// (cpp-httplib) that, like a kubelet started with --client-ca-file, refuses
// any client without a certificate from its CA. The CA and certificates are
// made per test run with the openssl CLI.
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/node_agent.h"
#include "lens/kubelet.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

// Makes `<dir>/<name>.{key,crt}` signed by `<dir>/<ca>.{key,crt}`.
bool Issue(const std::string& dir, const std::string& ca,
           const std::string& name, const std::string& cn,
           const std::string& ext) {
  std::ofstream(dir + "/" + name + ".ext") << ext << "\n";
  const std::string d = "'" + dir + "/";
  const std::string cmd =
      "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -keyout " +
      d + name + ".key' -out " + d + name + ".csr' -subj '/CN=" + cn +
      "' && openssl x509 -req -in " + d + name + ".csr' -CA " + d + ca +
      ".crt' -CAkey " + d + ca + ".key' -CAcreateserial -days 1 -out " + d +
      name + ".crt' -extfile " + d + name + ".ext'";
  return std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) == 0;
}

bool MakeCa(const std::string& dir, const std::string& name) {
  const std::string d = "'" + dir + "/";
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -days 1 -subj '/CN=" +
      name + "' -keyout " + d + name + ".key' -out " + d + name +
      ".crt' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

class KubeletClientCertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("openssl version >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "the openssl command is not installed";
    }
    std::string pattern = ::testing::TempDir() + "lens_kubelet_mtls_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_TRUE(MakeCa(dir_, "ca"));
    ASSERT_TRUE(MakeCa(dir_, "other-ca"));
    ASSERT_TRUE(Issue(dir_, "ca", "kubelet", "kubelet",
                      "subjectAltName=IP:127.0.0.1\n"
                      "extendedKeyUsage=serverAuth"));
    ASSERT_TRUE(Issue(dir_, "ca", "agent", "system:lens-node-agent",
                      "extendedKeyUsage=clientAuth"));
    ASSERT_TRUE(Issue(dir_, "other-ca", "stranger", "stranger",
                      "extendedKeyUsage=clientAuth"));
    server_ = std::make_unique<httplib::SSLServer>(Path("kubelet.crt").c_str(),
                                                   Path("kubelet.key").c_str(),
                                                   Path("ca.crt").c_str());
    ASSERT_TRUE(server_->is_valid());
    // What a kubelet with --client-ca-file does to a client without one.
    SSL_CTX_set_verify(server_->ssl_context(),
                       SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
    server_->Get("/pods", [this](const httplib::Request& req, auto& res) {
      std::lock_guard<std::mutex> lock(mu_);
      client_cn_ = PeerCommonName(req.ssl);
      res.set_content(R"({"kind":"PodList","items":[]})", "application/json");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  void TearDown() override {
    if (server_) {
      server_->stop();
      thread_.join();
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static std::string PeerCommonName(const SSL* ssl) {
    if (ssl == nullptr) return "";
    X509* cert = SSL_get1_peer_certificate(ssl);
    if (cert == nullptr) return "";
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn,
                              sizeof cn);
    X509_free(cert);
    return cn;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  KubeletOptions Options(const std::string& client) const {
    KubeletOptions o;
    o.url = "https://127.0.0.1:" + std::to_string(port_);
    o.ca_file = Path("ca.crt");
    o.timeout = milliseconds(3000);
    if (!client.empty()) {
      o.client_cert_file = Path(client + ".crt");
      o.client_key_file = Path(client + ".key");
    }
    return o;
  }
  std::string client_cn() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_cn_;
  }

  std::string dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::string client_cn_;
};

TEST_F(KubeletClientCertTest, TheKubeletAnswersAClientWithItsCertificate) {
  const KubeletOptions options = Options("agent");
  ASSERT_TRUE(options.Validate().ok()) << options.Validate();
  auto body = KubeletGet(options, "/pods");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, R"({"kind":"PodList","items":[]})");
  EXPECT_EQ(client_cn(), "system:lens-node-agent");
  auto allocation = ParseKubeletPodsGpuAllocation(*body);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(allocation->pods, 0);
}

TEST_F(KubeletClientCertTest, NoCertificateOrOneFromAnotherCaIsRefused) {
  for (const std::string client : {"", "stranger"}) {
    auto body = KubeletGet(Options(client), "/pods");
    ASSERT_FALSE(body.ok()) << client;
    EXPECT_EQ(body.status().code(), StatusCode::kUnavailable) << client;
    EXPECT_NE(body.status().message().find("127.0.0.1"), std::string::npos);
  }
  EXPECT_EQ(client_cn(), "");
}

TEST_F(KubeletClientCertTest, ValidateNamesTheBadFileWithoutItsContent) {
  KubeletOptions o = Options("agent");
  o.client_key_file.clear();
  Status st = o.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("together"), std::string::npos) << st;

  o = Options("agent");
  o.client_cert_file = Path("missing.crt");
  st = o.Validate();
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st;
  EXPECT_NE(st.message().find(Path("missing.crt")), std::string::npos) << st;

  o = Options("agent");
  o.client_key_file = Path("stranger.key");  // another certificate's key
  st = o.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find(Path("stranger.key")), std::string::npos) << st;
  EXPECT_EQ(st.message().find("PRIVATE KEY"), std::string::npos) << st;

  o = Options("agent");
  o.client_cert_file = Path("agent.ext");  // not PEM
  st = o.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find(Path("agent.ext")), std::string::npos) << st;
}

TEST_F(KubeletClientCertTest, TheNodeAgentRefusesToStartWithABadKey) {
  NodeAgentOptions a;
  a.roots = HostRoots::Under(std::string(LENS_FIXTURES_DIR) + "/hosts/empty");
  a.kubelet = Options("agent");
  EXPECT_TRUE(a.Validate().ok()) << a.Validate();
  a.kubelet.client_key_file = Path("stranger.key");
  Status st = a.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("kubelet client key"), std::string::npos) << st;
}

}  // namespace
}  // namespace lens
