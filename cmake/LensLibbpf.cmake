# libbpf 1.1 from Debian (libbpf-dev) as the imported target lens::libbpf, through pkg-config.
if(NOT TARGET lens::libbpf)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LENS_LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.0)
  add_library(lens::libbpf INTERFACE IMPORTED)
  target_link_libraries(lens::libbpf INTERFACE PkgConfig::LENS_LIBBPF)
endif()
