#include "store/pg/pg_url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lens::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PgUrlTest, ParsesFullUrl) {
  auto url = ParsePgUrl(
      "postgresql://lens:s3cret@db.example.com:6543/lens_prod"
      "?sslmode=verify-full&application_name=collector");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "db.example.com");
  EXPECT_EQ(url->port, 6543);
  EXPECT_EQ(url->database, "lens_prod");
  EXPECT_EQ(url->user, "lens");
  EXPECT_EQ(url->password, "s3cret");
  ASSERT_EQ(url->query.size(), 2u);
  EXPECT_EQ(url->query[0].first, "sslmode");
  EXPECT_EQ(url->query[0].second, "verify-full");
  EXPECT_EQ(url->query[1].first, "application_name");
  EXPECT_EQ(url->query[1].second, "collector");
}

TEST(PgUrlTest, AcceptsPostgresSchemeAndDefaultsPort) {
  auto url = ParsePgUrl("postgres://10.0.0.7/metrics");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "10.0.0.7");
  EXPECT_EQ(url->port, 5432);
  EXPECT_EQ(url->database, "metrics");
  EXPECT_TRUE(url->user.empty());
  EXPECT_TRUE(url->password.empty());
}

TEST(PgUrlTest, ParsesBracketedIpv6) {
  auto url = ParsePgUrl("postgresql://lens@[::1]:5433/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 5433);
  EXPECT_EQ(url->target(), "postgresql [::1]:5433/x");
  EXPECT_EQ(url->Redacted(), "postgresql://lens@[::1]:5433/x");
}

TEST(PgUrlTest, PercentDecodesEveryPart) {
  auto url = ParsePgUrl(
      "postgresql://us%40er:p%40ss%2Fw%3Ard@db/my%20db"
      "?application_name=a%26b%3Dc&sslrootcert=%2Fetc%2Fca.pem");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->user, "us@er");
  EXPECT_EQ(url->password, "p@ss/w:rd");
  EXPECT_EQ(url->database, "my db");
  EXPECT_EQ(url->query[0].second, "a&b=c");
  EXPECT_EQ(url->query[1].second, "/etc/ca.pem");
}

TEST(PgUrlTest, ConninfoQuotesAndEscapesValues) {
  auto url = ParsePgUrl("postgresql://o%27neil:a%27b%5Cc%20d@db:5432/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->conninfo(),
            "host='db' port='5432' dbname='x' user='o\\'neil' "
            "password='a\\'b\\\\c d' connect_timeout='5' "
            "client_encoding='UTF8'");
}

TEST(PgUrlTest, ConninfoKeepsGivenConnectTimeout) {
  auto url = ParsePgUrl("postgresql://db/x?connect_timeout=12&sslmode=require");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->conninfo(),
            "host='db' port='5432' dbname='x' connect_timeout='12' "
            "sslmode='require' client_encoding='UTF8'");
}

TEST(PgUrlTest, RedactedAndTargetNeverShowPassword) {
  auto url = ParsePgUrl("postgresql://lens:hunter2@db:5432/x?sslmode=disable");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->Redacted(), "postgresql://lens@db:5432/x?sslmode=disable");
  EXPECT_EQ(url->target(), "postgresql db:5432/x");
  EXPECT_THAT(url->conninfo(), HasSubstr("password='hunter2'"));
}

TEST(PgUrlTest, RedactedEncodesSpecialCharacters) {
  auto url = ParsePgUrl("postgresql://a%40b@db/my%20db?application_name=x%26y");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->Redacted(),
            "postgresql://a%40b@db:5432/my%20db?application_name=x%26y");
}

TEST(PgUrlTest, RejectsPortOutOfRangeNamingIt) {
  auto url = ParsePgUrl("postgresql://lens:topsecret@db:99999/x");
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(url.status().message(),
            "postgresql URL postgresql://lens@db:99999/x: port 99999 out of "
            "range 1..65535");
}

struct BadUrl {
  const char* url;
  const char* why;  // expected substring of the message
};

class PgUrlErrorTest : public ::testing::TestWithParam<BadUrl> {};

TEST_P(PgUrlErrorTest, RejectsWithReasonAndWithoutPassword) {
  auto url = ParsePgUrl(GetParam().url);
  ASSERT_FALSE(url.ok()) << GetParam().url;
  EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(url.status().message(), HasSubstr(GetParam().why));
  EXPECT_THAT(url.status().message(), Not(HasSubstr("pa55")));
  EXPECT_THAT(url.status().message(), Not(HasSubstr("%70a55")));
}

INSTANTIATE_TEST_SUITE_P(
    BadUrls, PgUrlErrorTest,
    ::testing::Values(
        BadUrl{"mysql://u:pa55@db/x", "must start with postgresql://"},
        BadUrl{"u:pa55@db/x", "must start with postgresql://"},
        BadUrl{"postgresql://u:pa55@db:0/x", "port 0 out of range"},
        BadUrl{"postgresql://u:pa55@db:65536/x", "port 65536 out of range"},
        BadUrl{"postgresql://u:pa55@db:54x/x", "port '54x' is not a number"},
        BadUrl{"postgresql://u:pa55@db:/x", "empty port"},
        BadUrl{"postgresql://u:pa55@db", "missing /database"},
        BadUrl{"postgresql://u:pa55@db/", "missing database name"},
        BadUrl{"postgresql://u:pa55@db:5432?sslmode=disable",
               "missing /database"},
        BadUrl{"postgresql://u:pa55@/x", "missing host"},
        BadUrl{"postgresql://u:pa55@d$b/x", "invalid host name 'd$b'"},
        BadUrl{"postgresql://u:pa55@a..b/x", "invalid host name"},
        BadUrl{"postgresql://u:pa55@::1/x", "IPv6 addresses must be written"},
        BadUrl{"postgresql://u:pa55@[::1/x", "missing ']'"},
        BadUrl{"postgresql://u:pa55@[zz::1]/x", "invalid IPv6 address"},
        BadUrl{"postgresql://u:pa55@[::1]x/x", "unexpected text after ']'"},
        BadUrl{"postgresql://u:pa55@db/x/y", "must not contain '/'"},
        BadUrl{"postgresql://u:pa55@db/x#frag", "fragments"},
        BadUrl{"postgresql://u:pa55@db/x?sslmode=maybe",
               "sslmode 'maybe' is not one of disable|allow|prefer|require|"
               "verify-ca|verify-full"},
        BadUrl{"postgresql://u:pa55@db/x?sslmode=", "needs a value"},
        BadUrl{"postgresql://u:pa55@db/x?sslmode", "needs a value"},
        BadUrl{"postgresql://u:pa55@db/x?password=pa55",
               "unknown option 'password'"},
        BadUrl{"postgresql://u:pa55@db/x?host=other", "unknown option 'host'"},
        BadUrl{"postgresql://u:pa55@db/x?sslmode=disable&sslmode=require",
               "given twice"},
        BadUrl{"postgresql://u:pa55@db/x?connect_timeout=0",
               "connect_timeout '0' must be a positive"},
        BadUrl{"postgresql://u:pa55@db/x?connect_timeout=-3",
               "must be a positive"},
        BadUrl{"postgresql://u:pa55@db/x?connect_timeout=5s",
               "must be a positive"},
        BadUrl{"postgresql://u:pa55@db/x?target_session_attrs=any-old",
               "target_session_attrs 'any-old' is not one of"},
        BadUrl{"postgresql://u:pa55@db/%zz", "bad percent-escape"},
        BadUrl{"postgresql://u:pa55@db/x%00y", "bad percent-escape"},
        BadUrl{"postgresql://u:pa55%@db/x",
               "bad percent-escape in the password"},
        BadUrl{"postgresql://u:%70a55@db:99999/x", "out of range"},
        BadUrl{"postgresql://:pa55@db/x", "password given without a user"},
        // Unencoded reserved characters in the password: nothing echoed.
        BadUrl{"postgresql://u:pa55/word@db/x", "percent-encode"},
        BadUrl{"postgresql://u:pa55?word@db:5432/x", "percent-encode"},
        BadUrl{"postgresql://u:pa55#word@db/x", "percent-encode"}));

TEST(PgUrlTest, PasswordWithAtSignUsesLastAt) {
  auto url = ParsePgUrl("postgresql://u:p@ss@db/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->password, "p@ss");
  EXPECT_EQ(url->host, "db");
}

TEST(PgUrlTest, AtSignInQueryValueIsNotUserInfo) {
  auto url = ParsePgUrl("postgresql://db:5432/x?application_name=me@host");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "db");
  EXPECT_TRUE(url->user.empty());
  EXPECT_EQ(url->query[0].second, "me@host");
}

TEST(PgUrlTest, AllowsUnderscoreHostsAndEmptyQueryPieces) {
  auto url = ParsePgUrl("postgresql://lens_db/x?&sslmode=disable&");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "lens_db");
  ASSERT_EQ(url->query.size(), 1u);
}

}  // namespace
}  // namespace lens::store
