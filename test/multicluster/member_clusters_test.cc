// The member clusters without the service: kubeconfigs from Secret values
// (inline credentials only), Secret data, and members read from two real
// (in-process) API servers: endpoints taken, kept stale while a member is
// down, members added and removed, a bad kubeconfig reported alone.
#include <gtest/gtest.h>

#include "multicluster/multicluster.h"
#include "multicluster_testing.h"

namespace lens::multicluster_testing {
namespace {

using std::chrono::seconds;
using Time = std::chrono::system_clock::time_point;

constexpr char kOrigin[] = "Secret lens/lens-clusters key us-east-1";

Time At(int64_t unix_seconds) { return Time(seconds(unix_seconds)); }

MemberReadOptions ReadOptions() {
  MemberReadOptions o;
  o.client.request_timeout = milliseconds(2000);
  o.client.connect_timeout = milliseconds(1000);
  return o;
}

TEST(KubeconfigFromTextTest, TakesInlineCredentials) {
  const std::string text =
      "current-context: c\n"
      "clusters: [{name: k, cluster: {server: 'https://10.0.0.1:6443', "
      "certificate-authority-data: " +
      Base64Encode("PEM CA") +
      "}}]\n"
      "users: [{name: u, user: {token: tok-s3cret, client-certificate-data: " +
      Base64Encode("PEM CERT") +
      ", client-key-data: " + Base64Encode("PEM KEY") +
      "}}]\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
  auto c = KubeconfigFromText(text, kOrigin);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "PEM CA");
  EXPECT_EQ(c->token, "tok-s3cret");
  EXPECT_EQ(c->client_cert_pem, "PEM CERT");
  EXPECT_EQ(c->client_key_pem, "PEM KEY");
  EXPECT_TRUE(c->ca_file.empty());
  EXPECT_EQ(c->origin, std::string(kOrigin) + " (context c)");
}

TEST(KubeconfigFromTextTest, RefusesFilePathsNamingTheFieldToUse) {
  const std::string head =
      "current-context: c\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
  const std::pair<std::string, std::string> cases[] = {
      {"clusters: [{name: k, cluster: {server: 'https://h', "
       "certificate-authority: /etc/ca.crt}}]\nusers: [{name: u, user: "
       "{token: t}}]\n",
       "certificate-authority names a file, which a kubeconfig held as text "
       "cannot use; use certificate-authority-data"},
      {"clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: "
       "[{name: u, user: {tokenFile: /var/run/token}}]\n",
       "tokenFile names a file, which a kubeconfig held as text cannot use; "
       "use token"},
      {"clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: "
       "[{name: u, user: {client-certificate: c.crt, client-key-data: "
       "eA==}}]\n",
       "use client-certificate-data"},
      {"clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: "
       "[{name: u, user: {exec: {command: aws}}}]\n",
       "exec plugin"}};
  for (const auto& [body, says] : cases) {
    auto c = KubeconfigFromText(head + body, kOrigin);
    ASSERT_FALSE(c.ok()) << body;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find(kOrigin), std::string::npos)
        << c.status();
    EXPECT_NE(c.status().message().find(says), std::string::npos) << c.status();
  }
}

TEST(KubeconfigFromTextTest, ErrorsNeverQuoteTheText) {
  for (const std::string& text :
       {std::string("token: s3cret-in-text: [unclosed"),
        std::string("just-a-s3cret-token"),
        std::string("current-context: s3cret\ncontexts: []\n")}) {
    auto c = KubeconfigFromText(text, kOrigin);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().message().find("s3cret-in"), std::string::npos)
        << c.status();
    EXPECT_EQ(c.status().message().find("just-a"), std::string::npos)
        << c.status();
    EXPECT_EQ(c.status().message().rfind(kOrigin, 0), 0u) << c.status();
  }
}

TEST(SecretDataTest, DecodesValuesAndNamesBadKeysOnly) {
  auto data = SecretData(
      multicluster::SecretJson("lens", "s", {}, {{"k", "v\n"}, {"e", ""}}, ""),
      "Secret lens/s");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->at("k"), "v\n");
  EXPECT_EQ(data->at("e"), "");
  auto bad = SecretData(
      R"({"kind":"Secret","data":{"databaseUrl":"not base64 s3cret!"}})",
      "Secret lens/s");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "Secret lens/s: data.databaseUrl: not base64 text");
  EXPECT_FALSE(SecretData(R"({"kind":"ConfigMap"})", "x").ok());
  auto none = SecretData(R"({"kind":"Secret"})", "x");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(MemberClustersTest, ReadsEachMembersEndpoints) {
  World w;
  MemberClusters members(ReadOptions());
  EXPECT_TRUE(members
                  .SetMembers({{"cluster-a", MemberKubeconfig(*w.a, kTokenA)},
                               {"cluster-b", MemberKubeconfig(*w.b, kTokenB)}},
                              "Secret lens/lens-clusters")
                  .empty());
  EXPECT_TRUE(members.Directory().empty());  // nothing read yet
  for (const MemberRead& r : members.Refresh(At(1000))) {
    EXPECT_TRUE(r.status.ok()) << r.name << ": " << r.status;
  }
  const std::vector<ClusterEndpoints> d = members.Directory();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (ClusterEndpoints{"cluster-a", kDbA, kPromA, kPromTokenA,
                                    false, 1000}));
  EXPECT_EQ(d[1], (ClusterEndpoints{"cluster-b", kDbB, "", "", false, 1000}));
  const std::vector<MemberStatus> m = members.Members();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].up);
  EXPECT_EQ(m[0].server, w.a->url());
  EXPECT_EQ(m[0].reads.at("ok"), 1u);
}

TEST(MemberClustersTest, ADownMemberKeepsItsLastEndpointsStale) {
  World w;
  MemberClusters members(ReadOptions());
  (void)members.SetMembers({{"cluster-a", MemberKubeconfig(*w.a, kTokenA)},
                            {"cluster-b", MemberKubeconfig(*w.b, kTokenB)}},
                           "Secret lens/lens-clusters");
  members.Refresh(At(1000));
  w.b->Stop();
  const std::vector<MemberRead> reads = members.Refresh(At(1030));
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_FALSE(reads[1].status.ok());
  EXPECT_TRUE(reads[1].was_up);
  std::vector<ClusterEndpoints> d = members.Directory();
  ASSERT_EQ(d.size(), 2u);
  // Read again, the same endpoints: the time they were found stays, so the
  // published directory does not change.
  EXPECT_EQ(d[0].updated_unix, 1000);
  EXPECT_FALSE(d[0].stale);
  EXPECT_EQ(d[1], (ClusterEndpoints{"cluster-b", kDbB, "", "", true, 1000}));
  EXPECT_FALSE(members.Members()[1].up);
  EXPECT_EQ(members.Members()[1].reads.at("error"), 1u);
  ASSERT_TRUE(w.b->Start());
  members.Refresh(At(1060));
  d = members.Directory();
  // Back from stale: found again now.
  EXPECT_EQ(d[1], (ClusterEndpoints{"cluster-b", kDbB, "", "", false, 1060}));
}

TEST(MemberClustersTest, AMemberThatWasNeverReadIsLeftOut) {
  World w;
  w.b->Stop();
  MemberClusters members(ReadOptions());
  (void)members.SetMembers({{"cluster-a", MemberKubeconfig(*w.a, kTokenA)},
                            {"cluster-b", MemberKubeconfig(*w.b, kTokenB)}},
                           "Secret lens/lens-clusters");
  members.Refresh(At(1000));
  ASSERT_EQ(members.Directory().size(), 1u);
  EXPECT_EQ(members.Directory()[0].name, "cluster-a");
  EXPECT_FALSE(members.Members()[1].in_directory);
  EXPECT_FALSE(members.Members()[1].error.empty());
}

TEST(MemberClustersTest, MembersAreAddedAndRemoved) {
  World w;
  MemberClusters members(ReadOptions());
  (void)members.SetMembers({{"cluster-a", MemberKubeconfig(*w.a, kTokenA)}},
                           "Secret lens/lens-clusters");
  members.Refresh(At(1000));
  ASSERT_EQ(members.Directory().size(), 1u);
  (void)members.SetMembers({{"cluster-b", MemberKubeconfig(*w.b, kTokenB)}},
                           "Secret lens/lens-clusters");
  // Removed at once; the new one appears with its first read.
  EXPECT_TRUE(members.Directory().empty());
  members.Refresh(At(1001));
  ASSERT_EQ(members.Directory().size(), 1u);
  EXPECT_EQ(members.Directory()[0].name, "cluster-b");
}

TEST(MemberClustersTest, BadKubeconfigsAndStorageSecretsAreReportedAlone) {
  World w;
  SetStorage(*w.b, "mysql://root:pg-pass-s3cret-bbbb@db.b/lens");
  MemberClusters members(ReadOptions());
  const std::vector<Status> problems = members.SetMembers(
      {{"cluster-a", MemberKubeconfig(*w.a, kTokenA)},
       {"cluster-b", MemberKubeconfig(*w.b, kTokenB)},
       {"broken", "not: [a kubeconfig"},
       {"Bad_Name", MemberKubeconfig(*w.a, kTokenA)},
       {"wrong-token", MemberKubeconfig(*w.a, "member-token-s3cret-nope")}},
      "Secret lens/lens-clusters");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].message(),
            "Secret lens/lens-clusters key Bad_Name: the key is not a cluster "
            "name (a DNS label: a-z, 0-9, '-', at most 63)");
  EXPECT_EQ(problems[1].message(),
            "Secret lens/lens-clusters key broken: not a valid kubeconfig "
            "(YAML error at line 1)");
  members.Refresh(At(1000));
  const std::vector<ClusterEndpoints> d = members.Directory();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "cluster-a");
  std::map<std::string, MemberStatus> by_name;
  for (const MemberStatus& m : members.Members()) by_name[m.name] = m;
  EXPECT_EQ(by_name["broken"].reads.at("bad_kubeconfig"), 1u);
  EXPECT_EQ(by_name["cluster-b"].reads.at("invalid"), 1u);
  EXPECT_EQ(by_name["cluster-b"].error,
            "Secret lens/lens-storage: databaseUrl: want a postgresql:// or "
            "sqlite:// URL");
  EXPECT_EQ(by_name["wrong-token"].reads.at("error"), 1u);
  EXPECT_NE(by_name["wrong-token"].error.find("401"), std::string::npos)
      << by_name["wrong-token"].error;
  for (const MemberStatus& m : members.Members()) {
    for (const std::string& secret : kSecrets) {
      EXPECT_EQ(m.error.find(secret), std::string::npos) << m.error;
    }
  }
}

}  // namespace
}  // namespace lens::multicluster_testing
