# Module include roots: each top-level module (allocator, traces, kernels, sim) is seen
# through an include directory of its own that holds only a link to that module's folder,
# so `#include "sim/..."` inside allocator/, traces/ or kernels/ fails to compile: a module
# reaches another only by linking it. (tests/layering/check_layering.py also checks the
# layers inside sim/.)
#
# pagesim_module_includes(TARGET MODULE [PUBLIC|INTERFACE]): TARGET sees MODULE's root.
function(pagesim_module_includes target module)
  set(scope PUBLIC)
  if(ARGC GREATER 2)
    set(scope ${ARGV2})
  endif()
  set(root ${CMAKE_BINARY_DIR}/pagesim_include/${module})
  if(NOT EXISTS ${root}/${module})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${module} ${root}/${module} SYMBOLIC)
  endif()
  target_include_directories(${target} ${scope} ${root})
endfunction()
