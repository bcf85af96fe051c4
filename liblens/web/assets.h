// The dashboard's files as embedded at build time (cmake/EmbedAssets.cmake
// generates the definition of EmbeddedAssets() from web/ and Debian's
// Chart.js; liblens/web/CMakeLists.txt lists them).
#ifndef LENS_WEB_ASSETS_H_
#define LENS_WEB_ASSETS_H_

#include <span>
#include <string_view>

namespace lens::web {

struct EmbeddedAsset {
  // The path it is served under, without the leading '/':
  // "index.html" (served as "/"), "static/app.js", ...
  std::string_view name;
  std::string_view bytes;  // static storage
};

// Every embedded file, in the order CMake listed them. Static storage;
// thread-safe.
std::span<const EmbeddedAsset> EmbeddedAssets();

}  // namespace lens::web

#endif  // LENS_WEB_ASSETS_H_
