#!/usr/bin/env bash
# Fetch Debian's trilinos source package with apt's own client and unpack only
# packages/kokkos and packages/kokkos-kernels.
#
# usage: fetch-trilinos-source.sh <work-dir> <dest-dir>
#
# apt runs with a private configuration under <work-dir>: its deb-src entries are
# derived from the machine's configured Debian sources (every `deb` entry whose
# suite belongs to this machine's Debian release, turned into `deb-src`), its
# package lists live under <work-dir>, and no system apt file is touched. apt
# checks the .dsc and tarball hashes against the signed Release file; any
# verification failure aborts this script.
set -euo pipefail

TRILINOS_VERSION=${LLMK_TRILINOS_VERSION:-13.2.0}
work=$1
dest=$2
mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/archives/partial" "$work/download"

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "error: cannot read VERSION_CODENAME from /etc/os-release" >&2; exit 1; }

# --- derive deb-src entries -------------------------------------------------
# deb822 files (*.sources): keep stanzas whose Types has `deb` and whose Suites
# are this release's (bookworm, bookworm-updates, bookworm-security, ...).
out="$work/sources.list.d/llmk-debian-src.sources"
: > "$out"
shopt -s nullglob
for f in /etc/apt/sources.list.d/*.sources; do
  awk -v codename="$codename" '
    function flush() {
      if (n > 0 && has_deb && suite_ok) {
        for (i = 1; i <= n; i++) {
          line = lines[i]
          if (line ~ /^Types:/) line = "Types: deb-src"
          print line
        }
        print ""
      }
      n = 0; has_deb = 0; suite_ok = 0
    }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { flush(); next }
    {
      lines[++n] = $0
      if ($1 == "Types:") { for (i = 2; i <= NF; i++) if ($i == "deb") has_deb = 1 }
      if ($1 == "Suites:") { for (i = 2; i <= NF; i++) if ($i ~ ("^" codename "([-/].*)?$")) suite_ok = 1 }
    }
    END { flush() }
  ' "$f" >> "$out"
done
# one-line files (sources.list, *.list): `deb [opts] uri suite comps` -> deb-src
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  awk -v codename="$codename" '
    $1 == "deb" {
      suite_field = ($2 ~ /^\[/) ? 0 : 3
      if (suite_field == 0) { for (i = 2; i <= NF; i++) if ($i ~ /\]$/) { suite_field = i + 2; break } }
      if ($suite_field ~ ("^" codename "([-/].*)?$")) { $1 = "deb-src"; print }
    }' "$f" > "$work/sources.list.d/llmk-$(basename "$f" .list).list"
done
if ! grep -qs . "$work"/sources.list.d/*; then
  echo "error: found no Debian '$codename' apt sources to derive deb-src entries from" >&2
  exit 1
fi

apt_opts=(
  -o "Dir::Etc::SourceList=/dev/null"
  -o "Dir::Etc::SourceParts=$work/sources.list.d"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache::Archives=$work/archives"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "APT::Get::AllowUnauthenticated=false"
  -o "APT::Sandbox::User=$(id -un)"   # the private dirs belong to us, not to _apt
)
echo "apt-get update (private configuration, deb-src only)"
apt-get "${apt_opts[@]}" -o "APT::Update::Error-Mode=any" update -q
cd "$work/download"
# The Debian revision (13.2.0-4, ...) is whatever the release carries.
version=$(apt-cache "${apt_opts[@]}" showsrc trilinos | awk '/^Version:/ {print $2}' |
          grep "^${TRILINOS_VERSION}-" | sort -V | tail -n1 || true)
[ -n "$version" ] || { echo "error: no trilinos ${TRILINOS_VERSION}-* source package in the configured Debian sources" >&2; exit 1; }
echo "apt-get source --download-only trilinos=$version"
apt-get "${apt_opts[@]}" source --download-only -q "trilinos=$version"

dsc=$(ls trilinos_"${TRILINOS_VERSION}"*.dsc 2>/dev/null | head -n1 || true)
[ -n "$dsc" ] || { echo "error: trilinos ${TRILINOS_VERSION} source was not downloaded" >&2; exit 1; }
orig=$(ls trilinos_"${TRILINOS_VERSION}".orig.tar.* | head -n1)
echo "unpacking packages/kokkos and packages/kokkos-kernels from $orig"
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
tar -xf "$orig" -C "$dest.tmp" --strip-components=1 --wildcards \
  '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
rm -rf "$dest" && mv "$dest.tmp" "$dest"
