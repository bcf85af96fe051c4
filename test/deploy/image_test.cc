// deploy/Dockerfile's runtime stage installs exactly the Debian packages
// whose shared libraries the daemons link: each library a daemon needs
// (its ELF NEEDED entries, resolved by dpkg) comes from a listed package or
// one a listed package depends on, and each listed library package is needed.
// (Building the image needs the network for Debian's packages; this is the
// part of it that can be checked here.)
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "manifests.h"

namespace lens::test {
namespace {

// The packages `apt-get install` names in the stage after `FROM <base>`.
std::set<std::string> RuntimePackages(const std::string& dockerfile,
                                      std::string* base) {
  std::set<std::string> out;
  std::istringstream lines(dockerfile);
  std::string line;
  bool runtime = false, installing = false;
  while (std::getline(lines, line)) {
    if (line.rfind("FROM ", 0) == 0) {
      runtime = line.find(" AS ") == std::string::npos;
      if (runtime) *base = line.substr(5);
      continue;
    }
    if (!runtime) continue;
    if (line.find("apt-get install") != std::string::npos) installing = true;
    if (!installing) continue;
    std::smatch m;
    if (std::regex_match(line, m,
                         std::regex(R"(\s+([a-z0-9][a-z0-9.+-]+) \\)"))) {
      out.insert(m[1]);
    }
    if (line.find("&&") != std::string::npos &&
        line.find("apt-get install") == std::string::npos) {
      installing = false;
    }
  }
  return out;
}

// The package of the file a library resolves to in `ldd`'s output for the
// binary ("libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x...)"), or "".
std::string PackageOf(const std::string& ldd, const std::string& soname) {
  // The dynamic loader has no "=>" line; it is libc6's.
  if (soname.rfind("ld-linux", 0) == 0) return "libc6";
  std::smatch m;
  const std::regex entry(
      "\\s" + std::regex_replace(soname, std::regex(R"([.+])"), R"(\$&)") +
      R"( => (\S+))");
  if (!std::regex_search(ldd, m, entry)) return "";
  for (const std::string& path :
       {m[1].str(), std::filesystem::canonical(m[1].str()).string()}) {
    auto run = RunCommand({"dpkg", "-S", path});
    if (run.ok() && run->wait_status == 0) {
      return run->out.substr(0, run->out.find_first_of(":\n"));
    }
  }
  return "";
}

TEST(Image, RuntimePackagesAreExactlyWhatTheDaemonsLink) {
#ifdef LENS_SANITIZED_BUILD
  // The image is built from the Release configuration; a sanitizer build's
  // daemons also link the runtimes' libraries (libatomic, grpc's own
  // dependencies without --as-needed), which say nothing about the image.
  GTEST_SKIP() << "sanitizer build: the image's binaries are the Release "
                  "build's (checked by `make image`)";
#endif
  std::string base;
  const std::set<std::string> listed =
      RuntimePackages(ReadFile(std::string(kDeployDir) + "/Dockerfile"), &base);
  EXPECT_EQ(base, "debian:bookworm-slim");
  ASSERT_GE(listed.size(), 5u);
  // What the slim base has, and what the listed packages bring along.
  std::set<std::string> allowed = {"libc6", "libgcc-s1", "libstdc++6"};
  for (const std::string& p : listed) {
    allowed.insert(p);
    auto depends = RunCommand({"dpkg-query", "-W", "-f=${Depends}", p});
    ASSERT_TRUE(depends.ok() && depends->wait_status == 0)
        << p << " is not a package of this machine";
    // "libabsl20220623 (>= 0~2022), libc6 (>= 2.32) | libc6.1, ...".
    const std::regex name(R"((?:^|, | \| )([a-z0-9][a-z0-9.+-]+))");
    for (std::sregex_iterator
             it(depends->out.begin(), depends->out.end(), name),
         end;
         it != end; ++it) {
      allowed.insert((*it)[1]);
    }
  }
  const auto daemons = DaemonFiles();
  ASSERT_GE(daemons.size(), 7u);
  std::set<std::string> needed;
  std::map<std::string, std::string> package_of;  // soname -> package
  for (const auto& [name, path] : daemons) {
    auto elf = RunCommand({"readelf", "-d", path});
    ASSERT_TRUE(elf.ok() && elf->wait_status == 0) << path;
    auto ldd = RunCommand({"ldd", path});
    ASSERT_TRUE(ldd.ok() && ldd->wait_status == 0) << path;
    const std::regex needed_entry(
        R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
    for (std::sregex_iterator
             it(elf->out.begin(), elf->out.end(), needed_entry),
         end;
         it != end; ++it) {
      const std::smatch& m = *it;
      std::string& package = package_of[m[1]];
      if (package.empty()) package = PackageOf(ldd->out, m[1]);
      ASSERT_NE(package, "") << name << ": " << m[1] << " has no package";
      needed.insert(package);
      EXPECT_TRUE(allowed.count(package))
          << name << " links " << m[1] << " (" << package
          << "), which deploy/Dockerfile's runtime stage lacks";
    }
  }
  for (const std::string& p : listed) {
    if (p == "ca-certificates") continue;  // TLS peers, not a library
    EXPECT_TRUE(needed.count(p)) << p << " is installed but no daemon links it";
  }
}

}  // namespace
}  // namespace lens::test
