# Install rules and package files: headers, the libraries, the CLI, its plot script and shape suites,
# gemmkitConfig.cmake (+ version file, targets) and gemmkit.pc. Included by the top
# CMakeLists.txt when GEMMKIT_INSTALL is on.
include(CMakePackageConfigHelpers)
set(GEMMKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gemmkit)

# A release build installs its binaries and libgemmkit.so stripped (as `cmake --install
# --strip`; their symbol tables are ~3.5 MB each); the build tree keeps its symbols for
# debuggers. First, so that every rule below sees it; `-DCMAKE_INSTALL_DO_STRIP=OFF` to
# cmake -P cmake_install.cmake keeps them.
install(CODE [[
if(NOT DEFINED CMAKE_INSTALL_DO_STRIP AND CMAKE_INSTALL_CONFIG_NAME MATCHES "^(Release|MinSizeRel)$")
  set(CMAKE_INSTALL_DO_STRIP ON)
endif()]])

# include/gemmkit/*.hpp, include/gemmkit.h (the C API) and the generated version header.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ ${PROJECT_BINARY_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

set(gemmkit_install_targets gemmkit_core gemmkit_primitives gemmkit_walks gemmkit)
if(GEMMKIT_SHARED)
  list(APPEND gemmkit_install_targets gemmkit_shared)
endif()
if(GEMMKIT_HAVE_MPI)
  list(APPEND gemmkit_install_targets gemmkit_dist)
endif()
install(TARGETS ${gemmkit_install_targets} EXPORT gemmkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(GEMMKIT_CLI)
  install(TARGETS gemmkit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/bench/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmkit)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/shapes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmkit/shapes
          FILES_MATCHING PATTERN "*.txt")
endif()
if(GEMMKIT_HAVE_CUDA)  # the kernels' recorded resources (src/CMakeLists.txt), for gemmkit explain
  install(FILES ${PROJECT_BINARY_DIR}/share/gemmkit/kernel_resources.tsv DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmkit)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/gemmkit)
install(EXPORT gemmkitTargets NAMESPACE gemmkit:: DESTINATION ${GEMMKIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gemmkitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/gemmkitConfig.cmake
                              INSTALL_DESTINATION ${GEMMKIT_CMAKE_DIR})
# Before 1.0 a new minor version may break the API: only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gemmkitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gemmkitConfig.cmake ${PROJECT_BINARY_DIR}/gemmkitConfigVersion.cmake
        DESTINATION ${GEMMKIT_CMAKE_DIR})

# gemmkit.pc: the shared library, which brings its own dependencies (the loader finds them).
# Without one (GEMMKIT_SHARED off), the static parts and what they need. No paths: the CUDA
# libraries are named only (-lcudart), found where the consumer's compiler looks
# (LIBRARY_PATH, or add -L<toolkit>/lib), as the build machine's folder would be wrong elsewhere.
set(GEMMKIT_PC_CFLAGS "")
if(GEMMKIT_HAVE_CUDA)
  set(GEMMKIT_PC_CFLAGS " -DGEMMKIT_HAVE_CUDA=1")
endif()
# What the library itself links (Libs.private for the shared one: `pkg-config --static`):
# the CUDA libraries, GMP, libdl and OpenMP; OpenBLAS, cuBLAS, cuSPARSE and NCCL are loaded
# at run time, not linked.
set(GEMMKIT_PC_DEPS "")
if(GEMMKIT_HAVE_CUDA)
  foreach(library IN LISTS GEMMKIT_CUDA_LINKED)  # CUDA::cudart -> -lcudart
    string(REGEX REPLACE "^CUDA::" "-l" flag ${library})
    string(APPEND GEMMKIT_PC_DEPS "${flag} ")
  endforeach()
endif()
string(APPEND GEMMKIT_PC_DEPS "-lgmp -ldl ${OpenMP_CXX_FLAGS}")
if(GEMMKIT_SHARED)
  set(GEMMKIT_PC_LIBS "-lgemmkit")
  set(GEMMKIT_PC_LIBS_PRIVATE "${GEMMKIT_PC_DEPS}")
else()
  set(GEMMKIT_PC_LIBS "-lgemmkit_primitives -lgemmkit_walks -lgemmkit_core ${GEMMKIT_PC_DEPS}")
  set(GEMMKIT_PC_LIBS_PRIVATE "")
endif()
# Relative to the .pc file, so that `cmake --install --prefix` anywhere gives a working one.
file(RELATIVE_PATH GEMMKIT_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" GEMMKIT_PC_PREFIX "${GEMMKIT_PC_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/gemmkit.pc.in ${PROJECT_BINARY_DIR}/gemmkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gemmkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
