# Sourced by the experiments' run_all.sh scripts, from the repository root: the pagesim they
# run. $PAGESIM when set; otherwise build-main/pagesim, configured (Release, no tests, no CUDA)
# and built here, so a script works from a clean clone.
if [ -z "${PAGESIM:-}" ]; then
  cmake -S . -B build-main -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAGESIM_BUILD_TESTS=OFF \
    -DPAGESIM_ENABLE_CUDA=OFF >/dev/null
  cmake --build build-main --target pagesim >/dev/null
  PAGESIM=build-main/pagesim
fi
