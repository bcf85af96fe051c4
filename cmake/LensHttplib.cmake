# cpp-httplib (Debian's 0.11 is a shared library plus a pkg-config file whose Cflags carry the
# OpenSSL/zlib/brotli defines it was built with); expose it as the imported target lens::httplib.
if(NOT TARGET lens::httplib)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  add_library(lens::httplib INTERFACE IMPORTED)
  target_link_libraries(lens::httplib INTERFACE PkgConfig::HTTPLIB)
endif()
