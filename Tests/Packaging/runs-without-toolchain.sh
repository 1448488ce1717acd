#!/bin/sh
# The installed program needs no Swift toolchain: meson links the Swift runtime and Foundation
# into it (--static-swift-stdlib), so no library it loads comes from the toolchain's folder, and
# a copy of it in another folder runs with an empty environment, with that folder hidden where
# a mount namespace can be had (root, or user namespaces).
# Usage: runs-without-toolchain.sh PROGRAM SWIFT VERSION DATASETS-FOLDER
set -eu
program=$1 swift=$2 version=$3 datasets=$4

# The folder of the toolchain's runtime libraries (libswiftCore.so, libFoundation.so...).
toolchain=$("$swift" -print-target-info | sed -n 's/^ *"runtimeResourcePath": "\(.*\)",\{0,1\}$/\1/p')
[ -n "$toolchain" ] || { echo "swift -print-target-info names no runtimeResourcePath"; exit 1; }

folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
cp "$program" "$folder/fetched-results"
status=0

libraries=$(env -i PATH=/usr/bin:/bin ldd "$folder/fetched-results")
if echo "$libraries" | grep -F "$toolchain/"; then
  echo "these libraries come from the toolchain's $toolchain: build with --static-swift-stdlib"
  status=1
fi
if echo "$libraries" | grep -E 'libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime|not found'; then
  echo "these libraries are Swift's runtime, or missing: link them statically (--static-swift-stdlib)"
  status=1
fi

# Runs "$@" (environment assignments, then a command) in $folder with an empty environment and,
# where unshare can make a mount namespace, an empty folder mounted over the toolchain's.
run() {
  if unshare --map-root-user --mount true 2>/dev/null; then
    unshare --map-root-user --mount sh -c 'mount -t tmpfs none "$0" && cd "$1" && shift && exec env -i PATH=/usr/bin:/bin "$@"' \
      "$toolchain" "$folder" "$@"
  else
    (cd "$folder" && exec env -i PATH=/usr/bin:/bin "$@")
  fi
}
unshare --map-root-user --mount true 2>/dev/null || echo "note: no mount namespace here, so $toolchain stays visible (ldd says it is not used)"

if output=$(run ./fetched-results --version 2>&1); then
  [ "$output" = "$version" ] || { echo "--version printed '$output', not $version"; status=1; }
else
  echo "--version failed: $output"
  status=1
fi
# Foundation at work (files, JSON, dates) and SQLite: a dataset's store made and dumped.
if output=$(run FETCHED_RESULTS_DATA="$datasets" ./fetched-results dump --dataset movies --store movies.sqlite 2>&1); then
  case "$output" in
    '{"dataset":"movies","sections":[{'*) ;;
    *) echo "dump printed something else than the movies' sections: $output" | head -c 600; echo; status=1;;
  esac
else
  echo "dump failed: $output"
  status=1
fi
exit $status
