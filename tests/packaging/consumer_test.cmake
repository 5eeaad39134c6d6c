# Builds the consumer project (tests/packaging/consumer) against skillbox one way and runs a skill with
# it, as a ctest (tests/CMakeLists.txt, label `packaging`). Arguments (-D):
#   MODE          find_package: install the build tree into WORK/prefix, then find_package(skillbox)
#                 subdirectory: add_subdirectory(SOURCE), the way FetchContent uses it
#                 subdirectory.configure: the same, configured only (no build, no run)
#   SOURCE        skillbox's source tree       BINARY   its build tree (find_package mode)
#   WORK          a scratch folder of this test (kept between runs: the second run is incremental)
#   LAUNCHER      compiler launcher (ccache) or empty
#   CC CXX        the compilers of the build under test, and CXX_FLAGS its flags: a consumer of a
#   CXX_FLAGS     sanitizer build (the asan preset) must compile and link with the same sanitizers
#   MAN_PAGE      the man page the build generated, or empty when help2man was missing at configure time
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "`${cmd}` failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  set(run_err "${err}" PARENT_SCOPE)
endfunction()

# Runs the hello skill with the consumer executable `exe` in both isolation modes; `what` names the
# consumer in the failure message.
function(expect_greeting exe name what)
  foreach(isolation inprocess process)
    run("${exe}" "${SOURCE}/examples/skills/hello" "{\"name\": \"${name}\"}" ${isolation})
    if(NOT run_out MATCHES "^ok \\{\"greeting\":\"Hello, ${name}!\"")
      message(FATAL_ERROR "${what} (${isolation}) printed:\n${run_out}${run_err}")
    endif()
  endforeach()
  set(run_out "${run_out}" PARENT_SCOPE)
endfunction()

set(consumer_build "${WORK}/consumer-${MODE}")
set(configure_only FALSE)
if(MODE STREQUAL "subdirectory.configure")
  set(MODE subdirectory)
  set(configure_only TRUE)
endif()
set(configure_args -S "${SOURCE}/tests/packaging/consumer" -B "${consumer_build}" -G Ninja
    -DSKILLBOX_MODE=${MODE} -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(NOT CXX)
  set(CXX c++)
endif()
if(CC)
  list(APPEND configure_args "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_C_FLAGS=${CXX_FLAGS}")
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")

if(MODE STREQUAL "find_package")
  set(prefix "${WORK}/prefix")
  file(REMOVE_RECURSE "${prefix}")
  run("${CMAKE_COMMAND}" --install "${BINARY}" --prefix "${prefix}")
  # What the issue lists: the library, the headers with the generated version.h, the CLI, the CMake
  # package with its version file, the pkg-config file.
  foreach(f include/skillbox/skillbox.h include/skillbox/version.h include/skillbox/result.h bin/skillbox
            lib/cmake/skillbox/skillboxConfig.cmake lib/cmake/skillbox/skillboxConfigVersion.cmake
            lib/pkgconfig/skillbox.pc lib/libskillbox_runner.a lib/libquickjs.a)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "cmake --install did not install ${f}")
    endif()
  endforeach()
  # The command's documentation for the shell: bash completion always, the man page when help2man built it.
  set(completion "${prefix}/share/bash-completion/completions/skillbox")
  if(NOT EXISTS "${completion}")
    message(FATAL_ERROR "cmake --install did not install share/bash-completion/completions/skillbox")
  endif()
  file(READ "${completion}" completion_text)
  if(NOT completion_text MATCHES "complete -F _skillbox skillbox" OR NOT completion_text MATCHES "'store'\\) _skillbox_reply='list get set")
    message(FATAL_ERROR "the installed completion file does not complete skillbox's commands:\n${completion_text}")
  endif()
  run(bash -n "${completion}")
  if(MAN_PAGE)
    set(man_page "${prefix}/share/man/man1/skillbox.1")
    if(NOT EXISTS "${man_page}")
      message(FATAL_ERROR "cmake --install did not install share/man/man1/skillbox.1")
    endif()
    find_program(MAN man)
    if(MAN)
      set(ENV{MANWIDTH} 100)
      run("${MAN}" -l -P cat "${man_page}")
      foreach(shown "skillbox - run untrusted JavaScript skills" "SYNOPSIS|Usage" "skillbox \\[OPTIONS\\] SUBCOMMAND"
                    "--version" "store" "ENVIRONMENT" "SKILLBOX_HOME")
        if(NOT run_out MATCHES "${shown}")
          message(FATAL_ERROR "man -l ${man_page} does not show \"${shown}\":\n${run_out}${run_err}")
        endif()
      endforeach()
    endif()
  else()
    message(STATUS "no man page to check: help2man was missing when the build was configured (scripts/setup.sh)")
  endif()
  run("${prefix}/bin/skillbox" --version)
  if(NOT run_out MATCHES "^skillbox [0-9]")
    message(FATAL_ERROR "the installed CLI printed an unexpected version:\n${run_out}")
  endif()
  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${prefix}")

  # pkg-config users: one compile-and-link line from skillbox.pc.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
  run("${PKG_CONFIG}" --cflags --libs skillbox)
  string(STRIP "${run_out}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  file(MAKE_DIRECTORY "${WORK}/pkgconfig")
  run("${CXX}" ${cxx_flags} "${SOURCE}/tests/packaging/consumer/consumer.cc" -o "${WORK}/pkgconfig/consumer" ${pc_flags}
      "-DSKILLBOX_WORKER=\"${prefix}/bin/skillbox-worker\"")
  expect_greeting("${WORK}/pkgconfig/consumer" Pkg "the consumer linked with pkg-config")
elseif(MODE STREQUAL "subdirectory")
  list(APPEND configure_args "-DSKILLBOX_SOURCE_DIR=${SOURCE}")
else()
  message(FATAL_ERROR "MODE must be find_package or subdirectory")
endif()

# A consumer tree kept from an earlier run that used another compiler cannot be reconfigured in place.
if(CC AND EXISTS "${consumer_build}/CMakeCache.txt")
  file(STRINGS "${consumer_build}/CMakeCache.txt" cached_cxx REGEX "^CMAKE_CXX_COMPILER:")
  string(REGEX REPLACE "^[^=]*=" "" cached_cxx "${cached_cxx}")
  if(NOT cached_cxx STREQUAL CXX)
    file(REMOVE_RECURSE "${consumer_build}")
  endif()
endif()
run("${CMAKE_COMMAND}" ${configure_args})
if(configure_only)
  # The consumer's CMakeLists fails the configure when a development target came along.
  message(STATUS "consumer (add_subdirectory) configured with the library only")
  return()
endif()
run("${CMAKE_COMMAND}" --build "${consumer_build}" -j 2)
expect_greeting("${consumer_build}/consumer" Ada "the consumer (${MODE})")
# The error path of the README example: a missing skill is a message, exit 2.
execute_process(COMMAND "${consumer_build}/consumer" "${WORK}/no-such-skill" "null" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR err STREQUAL "")
  message(FATAL_ERROR "the consumer on a missing skill exited ${rc} with stderr:\n${err}")
endif()
message(STATUS "consumer (${MODE}) ran the hello skill: ${run_out}")
