# Cross build for linux/arm64 with Debian's cross toolchain and multiarch
# libraries (scripts/deps.sh cross: crossbuild-essential-arm64 and the
# :arm64 -dev packages, after `dpkg --add-architecture arm64`):
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# Debian's aarch64-linux-gnu-gcc searches /usr/include/aarch64-linux-gnu and
# /usr/lib/aarch64-linux-gnu itself (its sysroot is /), so no sysroot is set;
# pkg-config is Debian's cross wrapper, which reads the :arm64 .pc files.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(PKG_CONFIG_EXECUTABLE aarch64-linux-gnu-pkg-config CACHE FILEPATH "pkg-config for arm64")
# Programs (git, the host dpscope that writes the man page) are the build
# machine's; libraries and headers the target's multiarch ones.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# qemu-user runs the target's programs where CMake needs to (try_run).
find_program(DPSCOPE_QEMU_AARCH64 qemu-aarch64-static)
if(DPSCOPE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DPSCOPE_QEMU_AARCH64})
endif()
# The cross compiler searches its own kernel headers first
# (/usr/aarch64-linux-gnu/include, linux-libc-dev-arm64-cross 6.1.4), whose
# linux/const.h spells __ALIGN_KERNEL with `typeof`, which ISO C++ (-std=c++20,
# no GNU extensions) does not have; linux-libc-dev 6.1.x later spells it
# __typeof__ (XT_ALIGN in collectors/netfilter uses it).
set(CMAKE_CXX_FLAGS_INIT "-Dtypeof=__typeof__")
