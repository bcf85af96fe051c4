// LoadKubeconfig and InClusterConnection on files written the way kubectl,
// kind and kubeadm write them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "lens/kube.h"

namespace lens {
namespace {

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "kubeconfig-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

// Two clusters and users; the current context uses certificate data
// (base64 PEM, as kind and kubeadm write admin.conf), the other a token and
// a CA file relative to the kubeconfig's folder.
constexpr char kTwoContexts[] = R"(apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNB
    server: https://127.0.0.1:6443
  name: kind-gpu
- cluster:
    certificate-authority: pki/ca.crt
    server: https://prod.example.com:6443
  name: prod
contexts:
- context:
    cluster: kind-gpu
    user: kind-gpu
  name: kind-gpu
- context:
    cluster: prod
    namespace: ml
    user: lens-reader
  name: prod
current-context: kind-gpu
preferences: {}
users:
- name: kind-gpu
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNFUlQ=
    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCktFWQ==
- name: lens-reader
  user:
    token: eyJhbGciOiJSUzI1NiJ9.secret-token-value
)";

TEST_F(KubeconfigTest, TheCurrentContextWithCertificateData) {
  auto c = LoadKubeconfig(Write("config", kTwoContexts));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "-----BEGIN CERTIFICATE-----\nCA");
  EXPECT_EQ(c->client_cert_pem, "-----BEGIN CERTIFICATE-----\nCERT");
  EXPECT_EQ(c->client_key_pem, "-----BEGIN EC PRIVATE KEY-----\nKEY");
  EXPECT_EQ(c->token, "");
  EXPECT_NE(c->origin.find("context kind-gpu"), std::string::npos);
}

TEST_F(KubeconfigTest, ANamedContextWithATokenAndARelativeCaFile) {
  auto c = LoadKubeconfig(Write("config", kTwoContexts), "prod");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://prod.example.com:6443");
  EXPECT_EQ(c->ca_file, dir_ + "/pki/ca.crt");
  EXPECT_EQ(c->token, "eyJhbGciOiJSUzI1NiJ9.secret-token-value");
  EXPECT_TRUE(c->client_cert_pem.empty());
}

TEST_F(KubeconfigTest, ErrorsNameTheFileAndEntryButNeverTheToken) {
  const std::string path = Write("config", kTwoContexts);
  auto missing = LoadKubeconfig(path, "staging");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
  EXPECT_NE(missing.status().message().find("\"staging\""), std::string::npos);

  std::string broken = kTwoContexts;
  broken.replace(broken.find("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNB"), 4,
                 "LS%%");
  auto bad = LoadKubeconfig(Write("bad", broken));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("certificate-authority-data"),
            std::string::npos)
      << bad.status();

  auto yaml = LoadKubeconfig(Write("yaml", "clusters: [\n  - name: x\n"));
  EXPECT_EQ(yaml.status().code(), StatusCode::kInvalidArgument);
  for (const auto& st : {missing.status(), bad.status(), yaml.status()}) {
    EXPECT_EQ(st.message().find("secret-token-value"), std::string::npos);
  }
  EXPECT_EQ(LoadKubeconfig(dir_ + "/absent").status().code(),
            StatusCode::kNotFound);
}

TEST_F(KubeconfigTest, ExecPluginsAreRefusedWithAReason) {
  auto c = LoadKubeconfig(Write("config", R"(clusters:
- cluster: {server: "https://eks.example.com"}
  name: eks
contexts:
- context: {cluster: eks, user: aws}
  name: eks
current-context: eks
users:
- name: aws
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
)"));
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("exec plugin"), std::string::npos);
}

TEST_F(KubeconfigTest, TokenFileAndInsecureSkipVerify) {
  auto c = LoadKubeconfig(Write("config", R"(clusters:
- cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
  name: lab
contexts:
- context: {cluster: lab, user: sa}
  name: lab
current-context: lab
users:
- name: sa
  user:
    tokenFile: tokens/sa
)"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token_file, dir_ + "/tokens/sa");
}

TEST_F(KubeconfigTest, InClusterFromTheServiceAccount) {
  std::filesystem::create_directories(dir_ + "/sa");
  Write("sa/token", "tok\n");
  Write("sa/ca.crt", "-----BEGIN CERTIFICATE-----\n");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto outside = InClusterConnection(dir_ + "/sa");
  EXPECT_EQ(outside.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(outside.status().message().find("KUBERNETES_SERVICE_HOST"),
            std::string::npos);
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = InClusterConnection(dir_ + "/sa");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->token_file, dir_ + "/sa/token");
  EXPECT_EQ(c->ca_file, dir_ + "/sa/ca.crt");
  auto no_token = InClusterConnection(dir_ + "/nothing");
  EXPECT_EQ(no_token.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_token.status().message().find("token"), std::string::npos);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

}  // namespace
}  // namespace lens
