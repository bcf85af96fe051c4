# Installs headers, liblens and a relocatable lensConfig.cmake so that consumers can
# find_package(lens) and link lens::lens. (lens's include directory is already in its
# INSTALL_INTERFACE; the CLI installs itself from daemons/lens.) Every library `lens` links
# PUBLIC must have its find_dependency() in lensConfig.cmake.in; test/install checks this.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Component "sdk" (headers, libraries, CMake package); the daemons are component "runtime", which is
# all the container image installs (`cmake --install --component runtime`).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/lens" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT sdk)
# lens::lens is the shared library (only the public API exported, third-party libraries
# private); lens::lens_static the static one, which brings its dependencies' targets along.
set_target_properties(lens PROPERTIES EXPORT_NAME lens_static)
install(TARGETS lens lens_proto lens_shared EXPORT lensTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT sdk
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT sdk)
install(EXPORT lensTargets NAMESPACE lens:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lens
        COMPONENT sdk)

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/lensConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/lensConfig.cmake" INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lens)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/lensConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/lensConfig.cmake" "${PROJECT_BINARY_DIR}/lensConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/LensPqxx.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/LensGrpc.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/LensLibbpf.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lens COMPONENT sdk)
