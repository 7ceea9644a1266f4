#!/usr/bin/env bash
# Installs every Debian 12 package qsweep needs to build, test, benchmark and post-process.
# Idempotent: re-running only checks that the packages are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  clang-format clang-tidy  # scripts/check-format.sh, scripts/check-tidy.sh
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  mpich libmpich-dev libhdf5-mpich-dev  # the second MPI family (scripts/build.sh --mpi mpich)
  hdf5-tools libboost-serialization-dev libboost-dev  # libboost-dev: Boost.Odeint (the fluid trajectory)
  libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev librandom123-dev libfmt-dev nlohmann-json3-dev libxxhash-dev
  python3-h5py python3-numpy python3-matplotlib
  python3-jsonschema  # tests/integration/status_json.sh validates `status --json` with it
  python3-xarray python3-h5netcdf  # results files open as xarray Datasets (run_xarray.sh)
  python3-venv python3-pip python3-setuptools  # the loader installs from python/pyproject.toml
  pybind11-dev python3-pybind11 python3-dev  # the Python module, import qsweep (docs/python.md)
  python3-pandas  # the pandas examples of docs/results-layout.md and docs/figures.md (doc_examples.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
