# libpqxx (Debian's 6.4) ships only a pkg-config file; expose it as the imported target
# lens::pqxx (libpqxx + libpq).
if(NOT TARGET lens::pqxx)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx libpq)
  add_library(lens::pqxx INTERFACE IMPORTED)
  target_link_libraries(lens::pqxx INTERFACE PkgConfig::PQXX)
endif()
