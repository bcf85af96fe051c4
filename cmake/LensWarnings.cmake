# Warning flags for Lens's own targets (not third-party code).
function(lens_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
