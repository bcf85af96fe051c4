#include "chromium.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "command.h"

namespace lens::test {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";

// The last `n` bytes of `text`, for error messages.
std::string Tail(const std::string& text, size_t n = 3000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// A fresh directory for one browser profile.
StatusOr<std::filesystem::path> TempProfile() {
  std::string dir =
      (std::filesystem::temp_directory_path() / "lens-chromium-XXXXXX")
          .string();
  if (::mkdtemp(dir.data()) == nullptr) {
    return InternalError("mkdtemp " + dir + ": cannot create");
  }
  return std::filesystem::path(dir);
}

}  // namespace

std::string ChromiumPath() {
  return ::access(kChromium, X_OK) == 0 ? kChromium : "";
}

StatusOr<ChromiumPage> LoadPage(const std::string& url,
                                const ChromiumOptions& options) {
  const std::string chromium = ChromiumPath();
  if (chromium.empty()) {
    return NotFoundError(std::string(kChromium) +
                         " not found (Debian package chromium)");
  }
  LENS_ASSIGN_OR_RETURN(std::filesystem::path profile, TempProfile());
  std::vector<std::string> argv = {
      chromium,
      "--headless=new",
      "--no-sandbox",  // tests may run as root, where the sandbox refuses
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      "--disable-background-networking",
      "--user-data-dir=" + profile.string(),
      "--enable-logging=stderr",
      "--v=0",
      "--virtual-time-budget=" + std::to_string(options.virtual_time.count()),
      "--window-size=" + std::to_string(options.window_width) + "," +
          std::to_string(options.window_height),
  };
  if (!options.screenshot.empty()) {
    argv.push_back("--screenshot=" + options.screenshot);
    argv.push_back("--hide-scrollbars");
  }
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  argv.push_back("--dump-dom");
  argv.push_back(url);
  StatusOr<CommandResult> run = RunCommand(argv, options.timeout);
  std::error_code ignored;
  std::filesystem::remove_all(profile, ignored);
  if (!run.ok()) return run.status().WithContext("chromium " + url);
  ChromiumPage page;
  page.dom = std::move(run->out);
  page.stderr_text = std::move(run->err);
  std::istringstream lines(page.stderr_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONSOLE") != std::string::npos)
      page.console.push_back(line);
  }
  if (run->wait_status != 0 || page.dom.empty()) {
    return InternalError("chromium " + url + ": " + Describe(run->wait_status) +
                         ", " + std::to_string(page.dom.size()) +
                         " bytes of DOM; stderr: " + Tail(page.stderr_text));
  }
  return page;
}

}  // namespace lens::test
