// ReadKernelFile on procfs tables: seq_file hands out one buffer of whole
// records per read, so a reader that stops at the first short read loses
// everything after the first page.
#include "core/kernel_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace lens {
namespace {

std::string ReadWithStream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// kallsyms without the symbols of BPF programs, which come and go while
// other tests load probes.
std::string WithoutBpfSymbols(const std::string& text) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + begin, end - begin);
    if (line.find("[bpf]") == std::string_view::npos) out.append(line);
    begin = end;
  }
  return out;
}

TEST(ReadKernelFileTest, ReadsASeqFileTableLargerThanAPage) {
  // kallsyms is a seq_file of megabytes whose content, BPF programs aside,
  // does not change while the test runs.
  const std::string path = "/proc/kallsyms";
  if (::access(path.c_str(), R_OK) != 0) GTEST_SKIP() << path << " unreadable";
  const std::string expected = WithoutBpfSymbols(ReadWithStream(path));
  ASSERT_GT(expected.size(), size_t{64} << 10);
  StatusOr<std::string> text = ReadKernelFile(path, size_t{256} << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::string got = WithoutBpfSymbols(*text);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

TEST(ReadKernelFileTest, ReadsARegularFileWholeAndEnforcesTheLimit) {
  char dir[] = "/tmp/lens-kernel-file-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/value";
  const std::string content(100'000, 'x');
  std::ofstream(path, std::ios::binary) << content;
  StatusOr<std::string> whole = ReadKernelFile(path, content.size());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, content);
  StatusOr<std::string> over = ReadKernelFile(path, content.size() - 1);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find(path), std::string::npos);
  StatusOr<std::string> empty = ReadKernelFile(std::string(dir) + "/none", 10);
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace lens
