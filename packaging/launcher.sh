#!/bin/sh
# @PROGRAM@ launcher of the Driftline offline install (made by `npm run package` from packaging/launcher.sh).
# Runs the bundled Node on the bundled program; nothing outside this folder is needed but libc.
# Before starting Node it checks that this machine can run the build (right CPU, glibc new enough) and,
# when not, says so in one line and exits 2. DRIFTLINE_UNAME_M and DRIFTLINE_GLIBC_VERSION stand in
# for `uname -m` and the C library's version in that check only (tests fake a machine with them).
here=$(dirname "$(readlink -f "$0")")
root=$(dirname "$here")
build_arch='@ARCH@'
glibc_min='@GLIBC_MIN@'

machine=${DRIFTLINE_UNAME_M:-$(uname -m)}
if [ "$machine" != "$build_arch" ]; then
  case $machine in
    x86_64 | amd64) hint='use the linux-x64 tarball' ;;
    aarch64 | arm64) hint='use the linux-arm64 tarball' ;;
    *) hint="Driftline has no build for $machine" ;;
  esac
  echo "driftline-edge: this build is for $build_arch, this machine is $machine; $hint" >&2
  exit 2
fi

glibc=${DRIFTLINE_GLIBC_VERSION:-$(getconf GNU_LIBC_VERSION 2>/dev/null)}
glibc=${glibc#glibc }
case $glibc in
  [0-9]*.[0-9]*) ;;
  *)
    echo "driftline-edge: this build needs glibc $glibc_min or newer and this machine has no glibc (musl or another C library); install on a glibc-based Linux" >&2
    exit 2
    ;;
esac
have_major=${glibc%%.*}
have_minor=${glibc#*.}
have_minor=${have_minor%%[!0-9]*}
need_major=${glibc_min%%.*}
need_minor=${glibc_min#*.}
if [ "$have_major" -lt "$need_major" ] || { [ "$have_major" -eq "$need_major" ] && [ "$have_minor" -lt "$need_minor" ]; }; then
  echo "driftline-edge: this build needs glibc $glibc_min or newer, this machine has $glibc; install on a newer Linux, or build the package (npm run package) on a machine with this glibc" >&2
  exit 2
fi

# glibc's malloc, unless set already: two arenas, not eight per core for Node's threads; blocks of 64 KiB
# and more (socket reads, payloads) mapped on their own and returned to the system when freed, rather
# than left between live blocks in the heap, which then cannot shrink; free memory at the top of the heap
# given back above 128 KiB.
: "${MALLOC_ARENA_MAX:=2}" "${MALLOC_MMAP_THRESHOLD_:=65536}" "${MALLOC_TRIM_THRESHOLD_:=131072}"
export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_

exec "$root/node/bin/node" @NODE_FLAGS@ "$root/lib/@BUNDLE@" "$@"
