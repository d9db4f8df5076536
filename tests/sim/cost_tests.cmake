# Tests of sim/cost/ (the cost models), one executable per file. Included from
# tests/sim/CMakeLists.txt; link pagesim_cost (or pagesim_sim once it holds sim/cost/).
foreach(n presets batch_shape roofline kv_capacity constant piecewise_linear profile factory)
  pagesim_add_test(sim_cost_${n}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/cost_${n}_test.cpp
    LIBS pagesim_cost)
endforeach()
