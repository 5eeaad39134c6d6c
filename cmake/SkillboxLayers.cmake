# One static library per layer (docs/architecture.md "Layers"), each linking only the layers below it.
#
#   skillbox_layer(NAME [DEPS layer...] [LIBS target...] [PRIVATE_LIBS target...]
#                  [EXCLUDE_DIRS dir...] [TARGET target] [INTERNAL])
#
# creates `skillbox_NAME` (alias `skillbox::NAME`) from NAME/**/*.cpp. DEPS are lower layers (by name);
# LIBS are other targets whose headers this layer's headers include (public), PRIVATE_LIBS those only its
# .cpp files use. EXCLUDE_DIRS are subfolders of NAME/ whose files belong to an executable, not the
# library (they still follow the layer's include rules). TARGET names the library instead (no alias):
# for a layer whose natural name an executable already has. INTERNAL: not part of libskillbox (neither
# installed nor in the pkg-config file), e.g. the code only the worker executable runs.
#
# The layering is enforced twice, so that a wrong include fails the build rather than a review:
#  - at link time: every layer's objects are also linked into a throwaway shared object with
#    `-Wl,--no-undefined` against nothing but its declared DEPS and LIBS, so a call into a layer above (or
#    a sideways one) is an undefined symbol;
#  - by the `layering.includes` test (cmake/CheckLayers.cmake), which also catches header-only misuse the
#    linker cannot see: every `#include "dir/..."` of a layer must name the layer itself, a declared
#    lower layer (transitively) or the public headers.
# The allowed graph is written to ${PROJECT_BINARY_DIR}/layers.txt for that test.

set(SKILLBOX_LAYER_GRAPH "" CACHE INTERNAL "layer: allowed layers, one per line")
set_property(GLOBAL PROPERTY SKILLBOX_LAYER_LINES "")
# Every layer's name in the order declared (bottom up), for the install rules (cmake/SkillboxInstall.cmake).
set_property(GLOBAL PROPERTY SKILLBOX_LAYERS "")

function(skillbox_layer name)
  cmake_parse_arguments(L "INTERNAL" "TARGET" "DEPS;LIBS;PRIVATE_LIBS;EXCLUDE_DIRS" ${ARGN})
  set(target skillbox_${name})
  if(L_TARGET)
    set(target ${L_TARGET})
  endif()
  set_property(GLOBAL PROPERTY SKILLBOX_LAYER_TARGET_${name} ${target})
  if(NOT L_INTERNAL)
    set_property(GLOBAL APPEND PROPERTY SKILLBOX_LAYERS ${name})
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${name}/*.cpp")
  foreach(dir IN LISTS L_EXCLUDE_DIRS)
    list(FILTER sources EXCLUDE REGEX "^${PROJECT_SOURCE_DIR}/${name}/${dir}/")
  endforeach()

  # Transitive closure of the allowed layers, for the include check.
  set(allowed ${name})
  foreach(dep IN LISTS L_DEPS)
    get_property(dep_target GLOBAL PROPERTY SKILLBOX_LAYER_TARGET_${dep})
    if(NOT dep_target)
      message(FATAL_ERROR "layer ${name} depends on ${dep}, which is not defined yet: define lower layers first")
    endif()
    get_property(dep_allowed GLOBAL PROPERTY SKILLBOX_LAYER_ALLOWED_${dep})
    list(APPEND allowed ${dep_allowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY SKILLBOX_LAYER_ALLOWED_${name} "${allowed}")
  list(JOIN allowed " " allowed_text)
  set_property(GLOBAL APPEND PROPERTY SKILLBOX_LAYER_LINES "${name}: ${allowed_text}")

  set(dep_targets "")
  foreach(dep IN LISTS L_DEPS)
    get_property(dep_target GLOBAL PROPERTY SKILLBOX_LAYER_TARGET_${dep})
    list(APPEND dep_targets ${dep_target})
  endforeach()

  if(NOT sources)
    # A layer with no code yet still exists in the graph, so that its dependants can name it.
    add_library(${target} INTERFACE)
    target_link_libraries(${target} INTERFACE ${dep_targets} ${L_LIBS})
    if(NOT L_TARGET)
      add_library(skillbox::${name} ALIAS ${target})
    endif()
    return()
  endif()

  add_library(${target} STATIC ${sources})
  if(NOT L_TARGET)
    add_library(skillbox::${name} ALIAS ${target})
  endif()
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>")
  target_compile_options(${target} PRIVATE ${SKILLBOX_WARNINGS})
  target_link_libraries(${target} PUBLIC ${dep_targets} ${L_LIBS} PRIVATE ${L_PRIVATE_LIBS})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)

  if(SKILLBOX_CHECK_LAYERS)
    add_library(${target}_layercheck SHARED $<TARGET_OBJECTS:${target}>)
    target_link_libraries(${target}_layercheck PRIVATE ${dep_targets} ${L_LIBS} ${L_PRIVATE_LIBS})
    target_link_options(${target}_layercheck PRIVATE "LINKER:--no-undefined")
    set_target_properties(${target}_layercheck PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/layercheck" EXCLUDE_FROM_ALL OFF)
  endif()
endfunction()

# Adds a line "name: allowed..." to the graph for a target that is not a layer library (the CLI).
function(skillbox_layer_graph_line line)
  set_property(GLOBAL APPEND PROPERTY SKILLBOX_LAYER_LINES "${line}")
endfunction()

# Writes the allowed graph for the include check. Call once, after the last layer.
function(skillbox_write_layer_graph)
  get_property(lines GLOBAL PROPERTY SKILLBOX_LAYER_LINES)
  list(JOIN lines "\n" text)
  file(WRITE "${PROJECT_BINARY_DIR}/layers.txt" "${text}\n")
endfunction()
