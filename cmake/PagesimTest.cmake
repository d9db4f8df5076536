# pagesim_add_test(NAME SOURCES... LIBS libs...): one GoogleTest executable per test file,
# discovered by CTest. Each case is registered as "<executable>.<Suite>.<Case>", so
# `ctest -R allocator_` or `-R kernels_` selects a module. Used by the main build
# (tests/CMakeLists.txt) and the standalone GPU build (bench/kernels/gpu), so both register
# the same test names. PAGESIM_SOURCE_DIR is the repository root.
function(pagesim_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main pagesim_options)
  target_compile_definitions(${name} PRIVATE PAGESIM_SOURCE_DIR="${PAGESIM_SOURCE_DIR}")
  # A test file is compiled at -O1 in a Release build (its libraries at -O3 as configured): it
  # drives library code and does little work itself, and -O3 code generation was two thirds
  # of its compile time (sim_experiment_test: 17 s at -O3, 12 s at -O1), half of CI's builds.
  target_compile_options(${name} PRIVATE $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-O1>)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${name}."
    PROPERTIES ENVIRONMENT "PAGESIM_SOURCE_DIR=${PAGESIM_SOURCE_DIR}")
endfunction()
