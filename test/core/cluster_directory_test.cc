// The cluster directory's YAML: what lens-multicluster writes, lens-api
// reads back the same; bad entries are refused by entry and field, and no
// message repeats a URL or token.
#include "core/cluster_directory.h"

#include <gtest/gtest.h>

namespace lens {
namespace {

std::vector<ClusterEndpoints> Two() {
  ClusterEndpoints a;
  a.name = "us-east-1";
  a.database_url = "postgresql://lens:s3cret@db.us-east-1:5432/lens";
  a.prometheus_url = "https://vm.us-east-1.example.com";
  a.prometheus_token = "tok-\"quoted\": yes";
  a.updated_unix = 1764122400;
  ClusterEndpoints b;
  b.name = "eu-west-2";
  b.database_url = "sqlite:///var/lib/lens/eu.db";
  b.stale = true;
  b.updated_unix = 1764100000;
  return {a, b};
}

TEST(ClusterDirectory, RendersAndParsesBackTheSame) {
  auto text = RenderClusterDirectory(Two());
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto back = ParseClusterDirectory(*text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, Two());
  EXPECT_NE(text->find("stale: true"), std::string::npos) << *text;
}

TEST(ClusterDirectory, AnEmptyListIsADirectoryWithNoCluster) {
  auto text = RenderClusterDirectory({});
  ASSERT_TRUE(text.ok());
  auto back = ParseClusterDirectory(*text);
  ASSERT_TRUE(back.ok()) << *text;
  EXPECT_TRUE(back->empty());
}

TEST(ClusterDirectory, RefusesBadEntriesWithoutEchoingSecrets) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"clusters:\n- {name: Bad_Name, databaseUrl: 'sqlite:///x'}\n",
       "clusters[0] (Bad_Name): name: want a DNS label (a-z, 0-9, '-', at most "
       "63)"},
      {"clusters:\n- {name: a, databaseUrl: 'mysql://u:s3cret@h/x'}\n",
       "clusters[0] (a): databaseUrl: want a postgresql:// or sqlite:// URL"},
      {"clusters:\n- {name: a, databaseUrl: 'sqlite:///x', prometheusUrl: "
       "'ftp://s3cret'}\n",
       "clusters[0] (a): prometheusUrl: want an http(s):// URL"},
      {"clusters:\n- {name: a, databaseUrl: 'sqlite:///x'}\n"
       "- {name: a, databaseUrl: 'sqlite:///y'}\n",
       "clusters[1] (a): name: duplicate"},
      {"clusters:\n- {name: a, databaseUrl: 'sqlite:///x', password: "
       "s3cret}\n",
       "clusters[0]: password: unknown key"},
      {"clusters:\n- {name: a, databaseUrl: 'sqlite:///x', stale: "
       "s3cret}\n",
       "clusters[0] (a): stale wants true/false, updated an integer"},
      {"clusters: {name: a}\n", "cluster directory: clusters: want a list"},
      {"nodes: []\n", "cluster directory: want a `clusters` list"},
      {"clusters: [s3cret\n", "cluster directory: not YAML (line 2)"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseClusterDirectory(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().message(), c.want) << c.text;
    EXPECT_EQ(parsed.status().message().find("s3cret"), std::string::npos);
  }
  std::vector<ClusterEndpoints> dup = Two();
  dup[1].name = dup[0].name;
  auto rendered = RenderClusterDirectory(dup);
  ASSERT_FALSE(rendered.ok());
  EXPECT_EQ(rendered.status().message(),
            "clusters[1] (us-east-1): name: duplicate");
  EXPECT_EQ(ParseClusterDirectory(std::string(2 << 20, ' ')).status().code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace lens
