# Cross-building Tessera for 64-bit ARM Linux (aarch64) on a Debian x86-64 host with Debian's cross
# toolchain (g++-aarch64-linux-gnu) and the :arm64 (multiarch) -dev packages of the dependencies.
# deploy/cross-arm64 installs both and uses this file:
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=deploy/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch layout: arm64 libraries and CMake package files live in /usr/lib/aarch64-linux-gnu,
# arm64-specific headers in /usr/include/aarch64-linux-gnu (both searched by the cross compiler).
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
# Programs run at build time are the build machine's: protoc comes from protobuf-compiler (amd64)
# while libprotobuf and its headers are the arm64 ones, and the two must be the same release.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
find_program(TESSERA_HOST_PROTOC protoc PATHS /usr/bin NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
if(TESSERA_HOST_PROTOC)
  set(Protobuf_PROTOC_EXECUTABLE ${TESSERA_HOST_PROTOC} CACHE FILEPATH "protoc of the build machine")
endif()
# pkg-config must see only the arm64 .pc files (libzstd, libxxhash).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
unset(ENV{PKG_CONFIG_PATH})
# Embree is amd64-only in Debian: tessera-bench is built without its Embree peer.
set(CMAKE_DISABLE_FIND_PACKAGE_embree ON)
# Test discovery (gtest_discover_tests) and ctest run the arm64 test binary under qemu-user.
find_program(TESSERA_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static NO_CMAKE_FIND_ROOT_PATH)
if(TESSERA_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_QEMU_AARCH64})
endif()
