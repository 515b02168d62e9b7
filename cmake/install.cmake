# Installing lazytrain for other CMake projects: `cmake --install build --prefix DIR` puts the
# public headers in DIR/include/lazytrain (<lt/...> and the ir/ headers they include), the
# libraries in DIR/lib, lt-opt, lt-ir and lt-launch in DIR/bin, and lazytrainConfig.cmake in
# DIR/lib/cmake/lazytrain, so that find_package(lazytrain) gives the target lazytrain::lazytrain,
# and find_package(lazytrain COMPONENTS trainer) also lazytrain::trainer: the example trainers'
# shared loop and command line (examples/trainer/, tools/cli.h), with the example models'
# headers, so that a program written like examples/fmnist_cnn.cpp builds against the install;
# COMPONENTS vision gives lazytrain::vision (lt/vision.h: JPEG, ImageFolder, transforms).
#
# The installed libraries are the static ones the build makes (position-independent, as the
# Python module links them), not a shared library: a user links lazytrain's six layer libraries
# and, through lazytrainConfig.cmake, the system libraries they use privately. The Python package
# goes where Debian's python3 finds it (python/CMakeLists.txt).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LT_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/lazytrain)  # no top-level include/ir/
set(LT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lazytrain)

install(DIRECTORY frontend/lt DESTINATION ${LT_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
# What the public headers include of the layers below (tests/install fails when one is missing).
install(FILES ir/dims.h ir/dtype.h ir/error.h ir/shape.h DESTINATION ${LT_INSTALL_INCLUDEDIR}/ir)
target_include_directories(lazytrain INTERFACE $<INSTALL_INTERFACE:${LT_INSTALL_INCLUDEDIR}>)
target_compile_features(lazytrain INTERFACE cxx_std_20)
if(LT_SANITIZE)
  target_link_options(lazytrain INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

install(TARGETS lazytrain lt_backends lt_codegen lt_passes lt_runtime lt_ir EXPORT lazytrainTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lt-opt lt-ir lt-launch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT lazytrainTargets NAMESPACE lazytrain:: DESTINATION ${LT_INSTALL_CMAKEDIR})

# The trainer component, in an export set of its own: only its users need CLI11.
install(DIRECTORY examples/ DESTINATION ${LT_INSTALL_INCLUDEDIR}/examples
        FILES_MATCHING PATTERN "*.h" PATTERN "minimal" EXCLUDE)
install(FILES tools/cli.h DESTINATION ${LT_INSTALL_INCLUDEDIR}/tools)
set_target_properties(lt_trainer PROPERTIES EXPORT_NAME trainer)
set_target_properties(lt_cli PROPERTIES EXPORT_NAME cli)
target_include_directories(lt_cli INTERFACE $<INSTALL_INTERFACE:${LT_INSTALL_INCLUDEDIR}>)
install(TARGETS lt_trainer lt_cli EXPORT lazytrainTrainerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT lazytrainTrainerTargets NAMESPACE lazytrain:: DESTINATION ${LT_INSTALL_CMAKEDIR})

# The vision component (lt/vision.h): only its users need libjpeg.
set_target_properties(lt_vision PROPERTIES EXPORT_NAME vision)
install(TARGETS lt_vision EXPORT lazytrainVisionTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT lazytrainVisionTargets NAMESPACE lazytrain:: DESTINATION ${LT_INSTALL_CMAKEDIR})

# Libraries the targets file names by path (LLVM and OpenBLAS: codegen/ and runtime/ say why);
# lazytrainConfig.cmake reports a missing one by name rather than failing at link time.
get_property(LT_INSTALL_SYSTEM_LIBRARIES GLOBAL PROPERTY LT_LIBRARIES_BY_PATH)
configure_package_config_file(cmake/lazytrainConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/lazytrainConfig.cmake
                              INSTALL_DESTINATION ${LT_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lazytrainConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lazytrainConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/lazytrainConfigVersion.cmake
        DESTINATION ${LT_INSTALL_CMAKEDIR})
