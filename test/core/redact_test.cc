// RedactCredentials: no password survives, in any of the forms a database
// URL or DSN can carry one; everything else stays readable.
#include "core/redact.h"

#include <gtest/gtest.h>

namespace lens {
namespace {

TEST(RedactTest, PasswordsGoInEveryForm) {
  struct Case {
    const char* in;
    const char* want;
  };
  const Case cases[] = {
      {"postgresql://lens:s3cret@db:5432/lens",
       "postgresql://lens:***@db:5432/lens"},
      {"postgresql://lens@db/lens?password=s3cret&sslmode=require",
       "postgresql://lens@db/lens?password=***&sslmode=require"},
      {"postgresql://lens@db/lens?sslmode=require&PASSWORD=s3cret",
       "postgresql://lens@db/lens?sslmode=require&PASSWORD=***"},
      {"postgresql://lens@db/lens?sslpassword=s3cret&passfile=/etc/lens/pgpass",
       "postgresql://lens@db/lens?sslpassword=***&passfile=/etc/lens/pgpass"},
      // Unencoded '@' and '/' in the password: cut to the last '@'.
      {"postgresql://lens:s3@c/ret@db/lens", "postgresql://lens:***@db/lens"},
      {"host=db user=lens password=s3cret dbname=lens",
       "host=db user=lens password=*** dbname=lens"},
      {"host=db password = 's3 cr\\'et' dbname=lens",
       "host=db password = *** dbname=lens"},
      {"sqlite:///var/lib/lens/lens.db", "sqlite:///var/lib/lens/lens.db"},
      // Keys that only end in "password" are not secrets.
      {"postgresql://db/lens?notpassword=x",
       "postgresql://db/lens?notpassword=x"},
  };
  for (const Case& c : cases) {
    const std::string out = RedactCredentials(c.in);
    EXPECT_EQ(out, c.want) << c.in;
    EXPECT_EQ(out.find("s3"), std::string::npos) << out;
  }
}

TEST(RedactTest, RedactedUrlDropsUserInfoQueryAndFragment) {
  EXPECT_EQ(RedactedUrl("https://user:s3cret@vm:8428/w?token=X#y"),
            "https://vm:8428/w");
  EXPECT_EQ(RedactedUrl("http://user@vm:8428"), "http://vm:8428");
  // An '@' in the path is not user information.
  EXPECT_EQ(RedactedUrl("http://vm/a@b"), "http://vm/a@b");
  EXPECT_EQ(RedactedUrl("vm:8428/x?t=1"), "vm:8428/x");
}

}  // namespace
}  // namespace lens
