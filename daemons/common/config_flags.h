// Flags as config overrides: each flag names the config key it sets, so a
// value from the command line is decoded and checked by the same rules as
// the file's and the LENS_* variables' (lens::LoadConfig). The tables are
// data; a daemon registers the ones it serves.
#ifndef LENS_DAEMONS_COMMON_CONFIG_FLAGS_H_
#define LENS_DAEMONS_COMMON_CONFIG_FLAGS_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/config.h"

namespace lens::cli {

struct ConfigFlag {
  enum Kind {
    kText,     // --flag VALUE: the value as written
    kSeconds,  // --flag SECONDS: a number of seconds (0.5) or a duration (5s)
    kSetTrue,  // --flag: the key becomes true
    kSetFalse  // --no-flag: the key becomes false
  };
  const char* name;  // "--listen"
  const char* path;  // "nodeExporter.listenAddress"
  Kind kind;
  const char* help;
};

// "0.5" -> "500ms"; anything else as given (the decoder says what is wrong).
inline std::string SecondsToDuration(const std::string& text) {
  double s = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
  if (ec != std::errc() || end != text.data() + text.size() || s < 0 ||
      !std::isfinite(s) || s > 1e9) {
    return text;
  }
  return std::to_string(static_cast<long long>(std::llround(s * 1000))) + "ms";
}

inline constexpr ConfigFlag kLoggingFlags[] = {
    {"--log-level", "logging.level", ConfigFlag::kText,
     "debug | info | warn | error"},
};

// The command line's config: --config FILE (defaults when absent), then the
// flags, in the order given.
struct ConfigFlags {
  std::string file;
  std::vector<ConfigOverride> overrides;

  void AddFile(CLI::App& app, const char* help) {
    app.add_option("--config", file, help)->check(CLI::ExistingFile);
  }

  // `help` replaces the help text of the flags it names (a program whose
  // defaults differ: `lens up` listens on 127.0.0.1).
  void Add(CLI::App& app, std::span<const ConfigFlag> flags,
           std::initializer_list<std::pair<std::string_view, const char*>>
               help = {}) {
    for (ConfigFlag f : flags) {
      for (const auto& [name, text] : help)
        if (name == f.name) f.help = text;
      const std::string name = f.name, path = f.path;
      if (f.kind == ConfigFlag::kSetTrue || f.kind == ConfigFlag::kSetFalse) {
        const std::string value =
            f.kind == ConfigFlag::kSetTrue ? "true" : "false";
        app.add_flag_callback(
            name,
            [this, name, path, value] {
              overrides.push_back({path, value, name});
            },
            f.help);
        continue;
      }
      const bool seconds = f.kind == ConfigFlag::kSeconds;
      app.add_option_function<std::string>(
          name,
          [this, name, path, seconds](const std::string& v) {
            overrides.push_back(
                {path, seconds ? SecondsToDuration(v) : v, name});
          },
          f.help);
    }
  }

  // Sets `path` unless a flag already did (a daemon's own default).
  void Default(const std::string& path, const std::string& value,
               const std::string& origin) {
    for (const ConfigOverride& o : overrides)
      if (o.path == path) return;
    overrides.insert(overrides.begin(), {path, value, origin});
  }

  StatusOr<Config> Load() const {
    ConfigLoadOptions options;
    options.overrides = overrides;
    return LoadConfig(file, options);
  }
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_COMMON_CONFIG_FLAGS_H_
