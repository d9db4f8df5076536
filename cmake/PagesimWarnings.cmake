# Project-wide compile flags: warnings for C++, optional sanitizers, expensive checks.
# pagesim_options is an INTERFACE target every pagesim library and executable links.
add_library(pagesim_options INTERFACE)
target_compile_options(pagesim_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>)
# GCC 12 reports -Wrestrict on plain std::string concatenation at -O2 (GCC bug 105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(pagesim_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(PAGESIM_EXPENSIVE_CHECKS)
  target_compile_definitions(pagesim_options INTERFACE PAGESIM_EXPENSIVE_CHECKS=1)
endif()
if(PAGESIM_SANITIZE)
  # float-cast-overflow named explicitly: Clang's `undefined` group includes it, GCC's does not,
  # and both accept it. A float->int cast out of range is UB that the simulator must reject.
  # -O1 (a Debug build has no -O flag, so -O0): the optimisation LLVM recommends under ASan;
  # the tests run about 5x faster than at -O0 (allocator random tests on 2 cores: 42 s -> 8 s)
  # with the same checks and symbolised stacks.
  set(_san -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
      -fno-omit-frame-pointer -O1)
  target_compile_options(pagesim_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_san}>)
  target_link_options(pagesim_options INTERFACE ${_san})
  # For tests that measure memory (sanitizer runtimes reserve their own), whatever the
  # compiler's own macro for it (GCC: __SANITIZE_ADDRESS__; Clang 14: none).
  target_compile_definitions(pagesim_options INTERFACE PAGESIM_SANITIZE_BUILD=1)
endif()
if(PAGESIM_FUZZ)
  # libFuzzer (tests/fuzz): every library gets coverage instrumentation (fuzzer-no-link) and
  # ASan + UBSan, so a harness finds crashes, leaks and UB anywhere below it; only the
  # harness executables link the fuzzer's main (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PAGESIM_FUZZ needs Clang (libFuzzer), found ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(_fuzz -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  target_compile_options(pagesim_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_fuzz}>)
  target_link_options(pagesim_options INTERFACE -fsanitize=address,undefined,float-cast-overflow)
endif()
