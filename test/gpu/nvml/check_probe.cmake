# cmake -DPROBE=<nvml_probe> -DEXPECT=<this_machine|fake_library> -P check_probe.cmake
#
# Runs examples/nvml_probe and checks its exit status against what it printed.
#   this_machine: either NVML is unavailable (exit 2, the Unavailable message on stderr: the
#     library is missing, or nvmlInit failed) or it answered (exit 0, a GPU list on stdout).
#   fake_library: LD_LIBRARY_PATH points at the stand-in libnvidia-ml.so.1 (fake_nvml.cc): exit 0
#     and its one answering GPU, with its values in base units.
execute_process(COMMAND ${PROBE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(said "exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")

function(expect text)
  string(FIND "${out}${err}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "nvml_probe output lacks '${text}'; ${said}")
  endif()
endfunction()

if(EXPECT STREQUAL "this_machine")
  if(rc EQUAL 2)
    string(REGEX MATCH "UNAVAILABLE: (libnvidia-ml\\.so\\.1 not found: no NVIDIA driver on this machine|nvmlInit failed: )" m "${err}")
    if(NOT m)
      message(FATAL_ERROR "nvml_probe exited 2 without NVML's Unavailable message; ${said}")
    endif()
    message(STATUS "NVML unavailable here, as reported: ${err}")
  elseif(rc EQUAL 0)
    expect("nvml: ")
    message(STATUS "NVML answered:\n${out}")
  else()
    message(FATAL_ERROR "nvml_probe: unexpected ${said}")
  endif()
elseif(EXPECT STREQUAL "fake_library")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvml_probe with the stand-in library: ${said}")
  endif()
  expect("nvml: 1 GPU(s), device set 2|GPU-3b1f0c4e-8d7a-11ec-a3c2-0242ac120002|?")
  expect("gpu 0: Tesla P100-PCIE-16GB")
  expect("  bdf: 0000:3b:00.0")
  expect("  pci: 10de:15f8 subsystem 10de:118f")
  expect("  driver: nvidia 510.47.03")
  expect("  power_watts: 26.16")
  expect("  energy_joules: -")
  expect("  clock_hz: graphics 4.05e+08 memory 7.15e+08 soc -")
  expect("  throttle_reasons: idle")
  expect("  processes: 40")
else()
  message(FATAL_ERROR "check_probe.cmake: EXPECT must be this_machine or fake_library")
endif()
