# Fetches QuickJS 2021-03-27 from the npm package qjsc@0.3.0 (the only copy reachable from our machines),
# verifies the tarball against its published sha512 integrity, applies patches/*.patch in name order and
# builds the engine as a static library. quickjs-libc.c is never compiled: skills get no std/os modules.
#
# The tarball is cached in SKILLBOX_CACHE_DIR (default ~/.cache/skillbox) so a second build dir, or a
# rebuild after `rm -rf build`, does not download it again.

set(QJS_NPM_SPEC "qjsc@0.3.0")
set(QJS_TARBALL_NAME "qjsc-0.3.0.tgz")
# npm's "integrity" field for qjsc@0.3.0, decoded from base64 to hex.
set(QJS_SHA512
    "6bbf9c53afc855c65b21e8df7ddb7fc1954c5fa2cbd8c0cbdc743d65be469b6dc6f43bc1312ff3f461c5c73dfd6c0be9d8fbcc38cfb2a52380ca892dd83759db")

if(DEFINED ENV{SKILLBOX_CACHE_DIR})
  set(SKILLBOX_CACHE_DIR "$ENV{SKILLBOX_CACHE_DIR}")
elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
  set(SKILLBOX_CACHE_DIR "$ENV{HOME}/.cache/skillbox")
else()
  set(SKILLBOX_CACHE_DIR "${PROJECT_BINARY_DIR}/_cache")
endif()
file(MAKE_DIRECTORY "${SKILLBOX_CACHE_DIR}")
set(QJS_TARBALL "${SKILLBOX_CACHE_DIR}/${QJS_TARBALL_NAME}")

function(_qjs_verify out_ok)
  if(EXISTS "${QJS_TARBALL}")
    file(SHA512 "${QJS_TARBALL}" got)
    if(got STREQUAL QJS_SHA512)
      set(${out_ok} TRUE PARENT_SCOPE)
      return()
    endif()
    message(WARNING "QuickJS tarball ${QJS_TARBALL} has sha512 ${got}, expected ${QJS_SHA512}; fetching again")
    file(REMOVE "${QJS_TARBALL}")
  endif()
  set(${out_ok} FALSE PARENT_SCOPE)
endfunction()

_qjs_verify(qjs_ok)
if(NOT qjs_ok)
  find_program(NPM_EXECUTABLE npm REQUIRED)
  message(STATUS "Fetching ${QJS_NPM_SPEC} with npm pack into ${SKILLBOX_CACHE_DIR}")
  execute_process(
    COMMAND "${NPM_EXECUTABLE}" pack "${QJS_NPM_SPEC}" --silent --pack-destination "${SKILLBOX_CACHE_DIR}"
    WORKING_DIRECTORY "${SKILLBOX_CACHE_DIR}"
    RESULT_VARIABLE npm_rc
    OUTPUT_QUIET)
  if(NOT npm_rc EQUAL 0)
    message(FATAL_ERROR "`npm pack ${QJS_NPM_SPEC}` failed (exit ${npm_rc}); is the npm registry reachable?")
  endif()
  _qjs_verify(qjs_ok)
  if(NOT qjs_ok)
    message(FATAL_ERROR "${QJS_TARBALL} does not match the published sha512 integrity of ${QJS_NPM_SPEC}; refusing to build")
  endif()
endif()

# Extract and patch into the build tree. A stamp records the tarball hash and the patch set so that
# changing a patch re-extracts from a clean copy.
set(QJS_SRC_ROOT "${PROJECT_BINARY_DIR}/_deps/quickjs")
set(QJS_DIR "${QJS_SRC_ROOT}/package/deps/quickjs_2021_03_27")
file(GLOB QJS_PATCHES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/patches/*.patch")
list(SORT QJS_PATCHES)
if(NOT QJS_PATCHES)
  # An unpatched engine has reachable bugs the suite guards against (docs/engine-patches.md): never build one.
  message(FATAL_ERROR "no engine patches found in ${PROJECT_SOURCE_DIR}/patches: refusing to build QuickJS unpatched")
endif()
set(stamp_content "${QJS_SHA512}")
foreach(p IN LISTS QJS_PATCHES)
  file(SHA256 "${p}" ph)
  string(APPEND stamp_content "\n${p}:${ph}")
endforeach()
set(QJS_STAMP "${QJS_SRC_ROOT}/.stamp")
set(old_stamp "")
if(EXISTS "${QJS_STAMP}")
  file(READ "${QJS_STAMP}" old_stamp)
endif()
if(NOT old_stamp STREQUAL stamp_content)
  file(REMOVE_RECURSE "${QJS_SRC_ROOT}")
  file(MAKE_DIRECTORY "${QJS_SRC_ROOT}")
  file(ARCHIVE_EXTRACT INPUT "${QJS_TARBALL}" DESTINATION "${QJS_SRC_ROOT}"
       PATTERNS "package/deps/quickjs_2021_03_27/*")
  find_program(PATCH_EXECUTABLE patch REQUIRED)
  foreach(p IN LISTS QJS_PATCHES)
    execute_process(
      COMMAND "${PATCH_EXECUTABLE}" -p1 --forward --batch -i "${p}"
      WORKING_DIRECTORY "${QJS_DIR}"
      RESULT_VARIABLE patch_rc
      OUTPUT_VARIABLE patch_out ERROR_VARIABLE patch_out)
    if(NOT patch_rc EQUAL 0)
      message(FATAL_ERROR "engine patch ${p} does not apply:\n${patch_out}")
    endif()
    message(STATUS "Applied engine patch ${p}")
  endforeach()
  file(WRITE "${QJS_STAMP}" "${stamp_content}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QJS_PATCHES})

add_library(quickjs STATIC
  "${QJS_DIR}/quickjs.c" "${QJS_DIR}/libregexp.c" "${QJS_DIR}/libunicode.c"
  "${QJS_DIR}/cutils.c" "${QJS_DIR}/libbf.c")
file(READ "${QJS_DIR}/VERSION" QJS_VERSION)
string(STRIP "${QJS_VERSION}" QJS_VERSION)
set(QJS_VERSION "${QJS_VERSION}" CACHE INTERNAL "QuickJS version")
# CONFIG_BIGNUM is needed for BigInt (ES2020). BigFloat, BigDecimal and operator overloading are compiled
# in but never added to a skill's context.
target_compile_definitions(quickjs PRIVATE _GNU_SOURCE CONFIG_VERSION="${QJS_VERSION}" PUBLIC CONFIG_BIGNUM)
target_compile_options(quickjs PRIVATE -w)
target_include_directories(quickjs SYSTEM PUBLIC "$<BUILD_INTERFACE:${QJS_DIR}>")
set_target_properties(quickjs PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 11)
find_package(Threads REQUIRED)
target_link_libraries(quickjs PUBLIC m Threads::Threads)
