# Warning flags for Lens's own targets (not third-party code).
function(lens_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # clang in C++20 mode flags RapidJSON 1.1.0's member-iterator operator== (declared with a
  # non-const-symmetric signature) at every call site in our code; the warning is about
  # RapidJSON, not us.
  # GCC 12 reports a false -Wrestrict inside libstdc++ for `std::string + "literal"` at -O2/-O3
  # (GCC bug 105329, fixed in GCC 13).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wno-ambiguous-reversed-operator)
  endif()
endfunction()
