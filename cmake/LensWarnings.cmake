# Warning flags for Lens's own targets (not third-party code).
function(lens_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # clang in C++20 mode flags RapidJSON 1.1.0's member-iterator operator== (declared with a
  # non-const-symmetric signature) at every call site in our code; the warning is about
  # RapidJSON, not us.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wno-ambiguous-reversed-operator)
  endif()
endfunction()
