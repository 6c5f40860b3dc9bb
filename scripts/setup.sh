#!/usr/bin/env bash
# Set up taco_gdal on a fresh Debian 12 machine (Python 3.11; root, or a user with sudo).
#
#   scripts/setup.sh runtime   GDAL + the runtime dependencies only (what `make demo` needs)
#   scripts/setup.sh dev       runtime + tests, reference tools, torch, Dask, and the
#                              system programs the tests drive (QGIS, Chromium): `make test`
#
# One libgdal per process: the osgeo bindings, rasterio and pyogrio are all built
# against Debian's system libgdal, so GDAL config options, credentials, /vsimem/
# and the VSI cache are shared by every GDAL user in the process.  The binary
# wheels of rasterio and pyogrio bundle their own GDAL and would break that.
#
# Idempotent: a stamp file records the hash of this script and of the pinned
# requirements; a second run with nothing changed returns in well under a second.
# Source-built wheels are cached outside the work tree so a fresh clone on the
# same machine does not rebuild them.
set -euo pipefail

MODE="${1:-dev}"
case "$MODE" in runtime|dev) ;; *) echo "usage: $0 [runtime|dev]" >&2; exit 2 ;; esac
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
VENV="${VENV:-$here/.venv}"
PY="${PYTHON:-python3}"
CACHE="${TACO_GDAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/taco_gdal}"
WHEELS="$CACHE/wheels"
STAMP="$VENV/.taco_gdal_setup_$MODE"
RASTERIO_VERSION=1.4.4
PYOGRIO_VERSION=0.13.0

say() { printf '[setup %(%H:%M:%S)T] %s\n' -1 "$*"; }

want="$(cat scripts/setup.sh requirements/*.txt pyproject.toml | sha256sum | cut -c1-16)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  say "$MODE environment up to date ($VENV)"
  exit 0
fi

# 1. System packages.  Runtime: GDAL with headers (the bindings build against it) and the
#    GDAL command-line tools; gcc/g++ to build the GDAL, rasterio and pyogrio bindings.
#    dev adds what the tests drive: unzip, PyQGIS, Chromium.
apt_wanted=(libgdal-dev gdal-bin gcc g++)
if [[ $MODE == dev ]]; then apt_wanted+=(unzip qgis python3-qgis chromium); fi
apt_missing=()
for pkg in "${apt_wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || apt_missing+=("$pkg")
done
if (( ${#apt_missing[@]} )); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing system packages ${apt_missing[*]} and no apt-get: install GDAL >= 3.6 with" \
      "headers (gdal-config on PATH) yourself, see README.md" >&2
    command -v gdal-config >/dev/null 2>&1 || exit 1
  else
    say "installing ${apt_missing[*]} with apt-get"
    SUDO=""; [[ $(id -u) == 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${apt_missing[@]}" >/dev/null
  fi
fi
GDAL_VERSION="$(gdal-config --version)"
say "system GDAL $GDAL_VERSION"

# 2. Virtual environment; numpy must be present before the osgeo bindings build,
#    or gdal_array is silently left out.
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_WARN_SCRIPT_LOCATION=1
pip install -q -c requirements/constraints.txt numpy setuptools wheel cython 2>&1 | grep -v "^WARNING: Location" || true

# 3. osgeo, rasterio and pyogrio built from source against the system libgdal,
#    each built once per machine into the wheel cache.
mkdir -p "$WHEELS"
build_wheel() {  # name version extra-pip-args...
  local name="$1" version="$2"; shift 2
  if ! ls "$WHEELS"/"${name}"-"${version}"-*.whl >/dev/null 2>&1; then
    say "building $name $version from source against libgdal $GDAL_VERSION"
    pip wheel -q --no-deps --no-cache-dir --no-binary "$name" -w "$WHEELS" "$@" "${name}==${version}" \
      2>&1 | grep -v "^WARNING: Location" || true
  fi
}
printf '[build_ext]\nparallel = 2\n' > "$CACHE/build_ext.cfg"
build_wheel GDAL "$GDAL_VERSION" --no-build-isolation &
p1=$!
DIST_EXTRA_CONFIG="$CACHE/build_ext.cfg" build_wheel rasterio "$RASTERIO_VERSION" &
p2=$!
build_wheel pyogrio "$PYOGRIO_VERSION" &
p3=$!
wait $p1; wait $p2; wait $p3
pip install -q --no-deps --force-reinstall \
  "$WHEELS"/GDAL-"$GDAL_VERSION"-*.whl \
  "$WHEELS"/rasterio-"$RASTERIO_VERSION"-*.whl \
  "$WHEELS"/pyogrio-"$PYOGRIO_VERSION"-*.whl 2>&1 | grep -v "^WARNING: Location" || true

# 4. Everything else from wheels, pinned; then the project itself (editable).
say "installing the pinned $MODE requirements (requirements/$MODE.txt)"
pip install -q -c requirements/constraints.txt -r "requirements/$MODE.txt" 2>&1 \
  | grep -v "^WARNING: Location" || true
if [[ $MODE == dev ]]; then
  # stackstac (a peer the STAC tests load with) pins pandas<3 without needing it.
  pip install -q --no-deps -c requirements/constraints.txt stackstac 2>&1 \
    | grep -v "^WARNING: Location" || true
fi
pip install -q --no-deps -e . 2>&1 | grep -v "^WARNING: Location" || true

# 5. Check the invariant this whole script exists for.
python - <<'PY'
from osgeo import gdal, gdal_array  # noqa: F401  (gdal_array proves the numpy build)
import pyogrio, rasterio
libs = {line.split()[-1] for line in open("/proc/self/maps") if "libgdal" in line}
assert len(libs) == 1, f"expected one libgdal mapped, found {sorted(libs)}"
versions = {gdal.__version__, rasterio.__gdal_version__, pyogrio.__gdal_version_string__}
assert len(versions) == 1, f"GDAL versions differ: {versions}"
print(f"one libgdal: {libs.pop()} (GDAL {versions.pop()})")
PY
echo "$want" > "$STAMP"
if [[ $MODE == dev ]]; then echo "$want" > "$VENV/.taco_gdal_setup_runtime"; fi
say "done"
