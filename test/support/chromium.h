// Debian's Chromium, headless, as the dashboard tests' browser: loads a URL,
// runs its scripts for a span of virtual time (timers fast-forward, network
// waits are real), and returns the DOM it ended with and the page's console
// messages; optionally a screenshot of the window.
#ifndef LENS_TEST_SUPPORT_CHROMIUM_H_
#define LENS_TEST_SUPPORT_CHROMIUM_H_

#include <chrono>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::test {

// "/usr/bin/chromium" (Debian package chromium) when it is there and
// executable; empty otherwise (tests then GTEST_SKIP with the reason).
std::string ChromiumPath();

struct ChromiumOptions {
  // How much virtual time the page gets after loading before the DOM is
  // dumped: timers up to this far run (Chromium's --virtual-time-budget).
  std::chrono::milliseconds virtual_time = std::chrono::milliseconds(5000);
  // Wall-clock limit of the whole browser run; past it the browser is
  // killed and the load is DeadlineExceeded.
  std::chrono::seconds timeout = std::chrono::seconds(60);
  // When set, a PNG of the window is written there as well.
  std::string screenshot;
  int window_width = 1400;
  int window_height = 1000;
  // More command-line switches ("--force-dark-mode").
  std::vector<std::string> extra_args;
};

struct ChromiumPage {
  std::string dom;  // document.documentElement.outerHTML at the end
  // The page's console messages (console.log/warn/error, uncaught errors,
  // CSP violations): Chromium prints each on stderr as
  //   [pid:tid:time:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)
  // with the same level whatever the console method; these are those lines.
  std::vector<std::string> console;
  std::string stderr_text;  // all of it, for failure messages
};

// Loads `url` in a fresh profile (a temporary --user-data-dir, removed
// after: no cookies, no localStorage). Errors: NotFound without Chromium,
// DeadlineExceeded past options.timeout, Internal when the browser exits
// with an error or dumps no DOM (the message carries the end of stderr).
StatusOr<ChromiumPage> LoadPage(const std::string& url,
                                const ChromiumOptions& options = {});

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_CHROMIUM_H_
