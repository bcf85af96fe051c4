#include "lens/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace lens {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd value " + std::to_string(x));
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  LENS_ASSIGN_OR_RETURN(int h, Half(x));
  LENS_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  LENS_RETURN_IF_ERROR(Half(x).status());
  return OkStatus();
}

TEST(StatusTest, OkHasNoMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndContext) {
  Status s =
      NotFoundError("no such device").WithContext("read /sys/class/drm/card0");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(),
            "NOT_FOUND: read /sys/class/drm/card0: no such device");
}

TEST(StatusTest, MacrosPropagateErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  StatusOr<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd value 3");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, ErrnoMapsToCanonicalCodes) {
  EXPECT_EQ(ErrnoError(ENOENT, "open x").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoError(EACCES, "open x").code(), StatusCode::kPermissionDenied);
  EXPECT_NE(ErrnoError(ENOENT, "open x").message().find("open x: "),
            std::string::npos);
}

}  // namespace
}  // namespace lens
