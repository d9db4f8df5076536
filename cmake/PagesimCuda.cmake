# CUDA is optional: kernels build when nvcc is found (and PAGESIM_ENABLE_CUDA is ON),
# are skipped cleanly otherwise. PAGESIM_HAVE_CUDA tells the rest of the build.
set(PAGESIM_HAVE_CUDA OFF)
if(PAGESIM_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper (H100/H200) is where the kernels are measured: 90a holds its wgmma prefill
      # kernel (sm_90a code runs on compute capability 9.0 only); sm_80 keeps A100s working.
      set(CMAKE_CUDA_ARCHITECTURES 80 90a)
    endif()
    enable_language(CUDA)
    set(PAGESIM_HAVE_CUDA ON)
    message(STATUS "pagesim: CUDA kernels enabled (${CMAKE_CUDA_COMPILER}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "pagesim: nvcc not found; CUDA kernels are skipped")
  endif()
endif()

# pagesim_cuda_target(TARGET): compile TARGET's .cu sources as C++20. CMake 3.25 has no C++20
# flag for nvcc (CMAKE_CUDA_STANDARD 20 fails at generate time) and otherwise falls back to
# the required CXX_STANDARD for CUDA, so: relax that requirement for the target and pass
# -std=c++20 to nvcc directly.
function(pagesim_cuda_target target)
  set_target_properties(${target} PROPERTIES CXX_STANDARD_REQUIRED OFF)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20 --expt-relaxed-constexpr>)
endfunction()
