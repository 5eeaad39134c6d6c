# The `layering.includes` test: cmake -DSOURCE_DIR=... -DGRAPH=.../layers.txt -P CheckLayers.cmake
#
# Every quoted include of a layer's files must name the layer itself, a layer it may use (GRAPH, written by
# skillbox_write_layer_graph from the CMake declarations), or the public headers (`skillbox/...`). The
# public headers may include only each other. Fails listing every offending file:line.

if(NOT DEFINED SOURCE_DIR OR NOT DEFINED GRAPH)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repo> -DGRAPH=<build>/layers.txt -P CheckLayers.cmake")
endif()

file(STRINGS "${GRAPH}" graph_lines)
set(layers "")
foreach(line IN LISTS graph_lines)
  if(line MATCHES "^([a-z_]+): (.*)$")
    set(layer "${CMAKE_MATCH_1}")
    string(REPLACE " " ";" allowed "${CMAKE_MATCH_2}")
    set(allowed_${layer} ${allowed} skillbox)
    list(APPEND layers ${layer})
  endif()
endforeach()
set(allowed_include skillbox)
list(APPEND layers include)

set(violations "")
set(checked 0)
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp")
  foreach(f IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]*)\".*$" "\\1" path "${inc}")
      if(NOT path MATCHES "/")
        continue()  # a file beside this one
      endif()
      string(REGEX REPLACE "/.*$" "" top "${path}")
      list(FIND allowed_${layer} "${top}" found)
      if(found EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
        list(APPEND violations "${rel}: includes \"${path}\", but ${layer}/ may use only: ${allowed_${layer}}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering violations (see docs/architecture.md \"Layers\"):\n  ${text}")
endif()
message(STATUS "layering: ${checked} files follow the layer graph")
