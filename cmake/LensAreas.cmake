# The areas of liblens and which may use which (docs/architecture.md). Checked at configure time:
# every #include in an area's sources, and in the public headers it owns, must name the area
# itself, an area it may use, or a header outside liblens. A wrong include fails the configure
# step with the file, the line and the rule.

# area -> the areas it may use (uses are not transitive: list what the code includes).
set(LENS_AREA_USES_core "")
set(LENS_AREA_USES_training core)
set(LENS_AREA_USES_store core training)
set(LENS_AREA_USES_gpu core)
set(LENS_AREA_USES_rdma core)
set(LENS_AREA_USES_host core)
set(LENS_AREA_USES_kubelet core)
set(LENS_AREA_USES_http core)
set(LENS_AREA_USES_agent core gpu rdma host kubelet http)
set(LENS_AREA_USES_containers core gpu rdma http proto)
set(LENS_AREA_USES_container_events core containers store http proto)
set(LENS_AREA_USES_flow core http containers)
set(LENS_AREA_USES_kube core)
set(LENS_AREA_USES_controller core kube store)
set(LENS_AREA_USES_scheduled core kube store controller)
set(LENS_AREA_USES_telemetry core store training)
set(LENS_AREA_USES_timeseries core store)
set(LENS_AREA_USES_web core http)
set(LENS_AREA_USES_insights core store training timeseries gpu rdma)
set(LENS_AREA_USES_api core store http training timeseries insights)
set(LENS_AREA_USES_tuner core)
set(LENS_AREA_USES_multicluster core kube)
set(LENS_AREA_USES_service core gpu rdma host kubelet http agent containers container_events flow store kube
                           controller scheduled telemetry timeseries insights web api tuner
                           multicluster)
# Not an area of liblens: what daemons/ may include besides the public API.
set(LENS_AREA_USES_daemons core service)
set(LENS_AREAS core training store gpu rdma host kubelet http agent containers container_events flow
               kube controller scheduled telemetry timeseries insights web api tuner multicluster service)

# Public header (include/lens/<name>.h) -> the area that owns it.
set(LENS_PUBLIC_HEADER_OWNERS
  amd_smi=gpu containers=containers export=core flow=flow flow_policy=flow gpu=gpu host=core
  insights=insights insights_health=insights insights_placement=insights
  insights_stragglers=insights kube=kube kubelet=kubelet log=core model=core node=host probe=agent rdma=rdma
  sample_history=store status=core store=store timeseries=timeseries training=training
  version=core)

# The area an include names, or "" for one outside liblens.
function(_lens_include_area include out)
  set(area "")
  if(include MATCHES "^lens/v1/")
    set(area proto)
  elseif(include MATCHES "^lens/([a-z_0-9]+)\\.h$")
    set(name ${CMAKE_MATCH_1})
    foreach(pair ${LENS_PUBLIC_HEADER_OWNERS})
      if(pair MATCHES "^${name}=(.+)$")
        set(area ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if("${area}" STREQUAL "")
      message(FATAL_ERROR "lens/${name}.h has no owning area in cmake/LensAreas.cmake")
    endif()
  elseif(include MATCHES "^([a-z_0-9]+)/")
    list(FIND LENS_AREAS ${CMAKE_MATCH_1} found)
    if(found GREATER -1)
      set(area ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} ${area} PARENT_SCOPE)
endfunction()

function(_lens_check_file file area)
  # One way to write JSON: core/json.h's JsonWriter (its rules for strings and
  # numbers hold for every document), never RapidJSON's writers.
  file(STRINGS ${file} writers REGEX "^#include <rapidjson/(writer|prettywriter|stringbuffer)\\.h>")
  if(writers)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${file})
    message(FATAL_ERROR "${rel}: includes a RapidJSON writer; Lens writes JSON with "
                        "JsonWriter (core/json.h)")
  endif()
  file(STRINGS ${file} lines REGEX "^#include \"")
  set(allowed ${area} ${LENS_AREA_USES_${area}})
  foreach(line ${lines})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*$" "\\1" include "${line}")
    _lens_include_area(${include} used)
    if(area STREQUAL "daemons" AND include MATCHES "^lens/")
      set(used "")  # the public API is open to every daemon
    endif()
    if(NOT "${used}" STREQUAL "")
      list(FIND allowed ${used} ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${file})
        message(FATAL_ERROR "${rel}: includes \"${include}\" (area ${used}), but area ${area} "
                            "may use only: ${LENS_AREA_USES_${area}} (cmake/LensAreas.cmake, "
                            "docs/architecture.md)")
      endif()
    endif()
  endforeach()
endfunction()

function(lens_check_areas)
  foreach(area ${LENS_AREAS})
    file(GLOB_RECURSE sources ${PROJECT_SOURCE_DIR}/liblens/${area}/*.h
                              ${PROJECT_SOURCE_DIR}/liblens/${area}/*.cc)
    foreach(file ${sources})
      _lens_check_file(${file} ${area})
    endforeach()
  endforeach()
  foreach(pair ${LENS_PUBLIC_HEADER_OWNERS})
    string(REPLACE "=" ";" parts ${pair})
    list(GET parts 0 name)
    list(GET parts 1 area)
    _lens_check_file(${PROJECT_SOURCE_DIR}/include/lens/${name}.h ${area})
  endforeach()
  # Daemons and the CLI: the public API (any lens/*.h), the service layer and core's
  # process, config and JSON helpers; never another area's internals.
  file(GLOB_RECURSE daemon_sources ${PROJECT_SOURCE_DIR}/daemons/*.h
                                   ${PROJECT_SOURCE_DIR}/daemons/*.cc)
  foreach(file ${daemon_sources})
    _lens_check_file(${file} daemons)
  endforeach()
  file(GLOB headers RELATIVE ${PROJECT_SOURCE_DIR}/include/lens ${PROJECT_SOURCE_DIR}/include/lens/*.h)
  foreach(h ${headers})
    string(REGEX REPLACE "\\.h$" "" name ${h})
    _lens_include_area("lens/${h}" owner)  # fails when a header has no owner
  endforeach()
endfunction()

# `cmake -DPROJECT_SOURCE_DIR=<repo> -P cmake/LensAreas.cmake`: the same check as a test, so an
# include added after configuring is caught by `make test` too.
if(CMAKE_SCRIPT_MODE_FILE)
  lens_check_areas()
endif()
