# Install rules: `cmake --install build --prefix P` puts into P
#   lib/                      the layer libraries (static) and the patched QuickJS engine they need
#   include/skillbox/         the public headers, the generated version.h among them
#   bin/skillbox              the CLI (when SKILLBOX_BUILD_CLI)
#   bin/skillbox-worker       the worker executable of WorkerRunner (imported target skillbox::worker)
#   share/man/man1/           skillbox.1 and skillbox-COMMAND.1, one per command (when SKILLBOX_BUILD_CLI)
#   share/bash-completion/completions/skillbox      the bash, zsh and fish completion scripts (when
#   share/zsh/site-functions/_skillbox              SKILLBOX_BUILD_CLI)
#   share/fish/vendor_completions.d/skillbox.fish
#   share/doc/skillbox/       README.md and docs/*.md, the guides the man pages name
#   lib/cmake/skillbox/       skillboxConfig.cmake, its version file and the exported targets:
#                             find_package(skillbox) gives `skillbox::skillbox`, one target to link
#   lib/pkgconfig/skillbox.pc the same for pkg-config users
#
# The man pages and completion scripts are generated at install time by the built command
# (cmake/SkillboxInstallGenerated.cmake), so an install needs nothing built but the command and the
# libraries: it works right after scripts/demo.sh, which builds skillbox_cli only.
#
# Installed programs are stripped and the libraries lose their debug sections (SKILLBOX_INSTALL_STRIP,
# on by default: the RelWithDebInfo CLI is about 100 MB with its debug info, 10 MB without). The build
# tree keeps its debug info; -DSKILLBOX_INSTALL_STRIP=OFF installs it as built (`cmake --install --strip`
# then strips as CMake does).
#
# Embedders link one target, skillbox::skillbox: it brings every layer in link order and, through
# find_dependency in skillboxConfig.cmake, the libraries the layers use privately (libcurl, SQLite,
# libseccomp, nlohmann_json's headers, threads).
include(CMakePackageConfigHelpers)

set(SKILLBOX_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/skillbox")

option(SKILLBOX_INSTALL_STRIP "Strip the installed programs and the debug info of the installed libraries" ON)
if(SKILLBOX_INSTALL_STRIP)
  # First in the install script: CMake's own strip rule of each program below reads it. `cmake --install
  # --strip` sets it to 1 before this runs.
  install(CODE "if(NOT DEFINED CMAKE_INSTALL_DO_STRIP)\n  set(CMAKE_INSTALL_DO_STRIP 1)\nendif()")
endif()
# Every layer library, bottom up, as cmake/SkillboxLayers.cmake declared them (a new layer is installed
# without a change here), plus the engine.
get_property(SKILLBOX_INSTALL_LAYERS GLOBAL PROPERTY SKILLBOX_LAYERS)

set(_skillbox_targets skillbox skillbox_public_headers quickjs)
foreach(layer IN LISTS SKILLBOX_INSTALL_LAYERS)
  list(APPEND _skillbox_targets skillbox_${layer})
endforeach()

install(TARGETS ${_skillbox_targets}
        EXPORT skillboxTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# CMake strips programs and shared libraries, never static ones: their debug sections go here.
set(_skillbox_archives "")
foreach(target IN LISTS _skillbox_targets)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    list(APPEND _skillbox_archives "$<TARGET_FILE_NAME:${target}>")
  endif()
endforeach()
if(CMAKE_STRIP)
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      foreach(archive ${_skillbox_archives})
        set(path \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/\${archive}\")
        execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${path}\" RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
          message(FATAL_ERROR \"${CMAKE_STRIP} --strip-debug \${path} failed (\${rc})\")
        endif()
      endforeach()
    endif()")
endif()

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/skillbox" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/generated/skillbox/version.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/skillbox")

if(SKILLBOX_BUILD_CLI)
  install(TARGETS skillbox_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  # The guides, laid out as in the source tree so that README.md's links to docs/ work.
  install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
  # JSON Schemas of skill.json and skill.test.json, for editors and CI checks.
  install(FILES "${PROJECT_SOURCE_DIR}/schemas/skill.schema.json" "${PROJECT_SOURCE_DIR}/schemas/skill.test.schema.json"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/skillbox/schemas")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs"
          FILES_MATCHING PATTERN "*.md")
  # The man pages (naming the guides' installed paths) and the completion scripts, written by the command.
  install(CODE "
    set(SKILLBOX_CLI \"$<TARGET_FILE:skillbox_cli>\")
    set(SKILLBOX_STAGE \"${PROJECT_BINARY_DIR}/install-generated\")
    set(SKILLBOX_DOCDIR \"${CMAKE_INSTALL_DOCDIR}\")
    set(SKILLBOX_MANDIR \"${CMAKE_INSTALL_MANDIR}\")
    set(SKILLBOX_DATADIR \"${CMAKE_INSTALL_DATADIR}\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/SkillboxInstallGenerated.cmake\")")
endif()
# The worker executable WorkerRunner starts, exported as skillbox::worker so that an embedder can pass
# $<TARGET_FILE:skillbox::worker> as HostOptions::worker_path wherever the package was installed (the
# CLI finds it beside itself; the compiled-in fallback is the prefix configured at build time, which
# `cmake --install --prefix P` does not change).
install(TARGETS skillbox_worker EXPORT skillboxTargets RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

install(EXPORT skillboxTargets NAMESPACE skillbox:: DESTINATION "${SKILLBOX_CMAKE_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/skillboxConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/packaging/skillboxConfig.cmake"
                              INSTALL_DESTINATION "${SKILLBOX_CMAKE_DIR}")
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/packaging/skillboxConfigVersion.cmake"
                                 VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/packaging/skillboxConfig.cmake"
              "${PROJECT_BINARY_DIR}/packaging/skillboxConfigVersion.cmake"
        DESTINATION "${SKILLBOX_CMAKE_DIR}")

# pkg-config: static libraries, so the layers come in link order (each before the ones it uses) and the
# system libraries they use are required publicly.
# Declared bottom up, so the reverse order puts every layer before the layers it uses.
set(SKILLBOX_PC_LIBS "")
set(_skillbox_link_order ${SKILLBOX_INSTALL_LAYERS})
list(REVERSE _skillbox_link_order)
foreach(layer IN LISTS _skillbox_link_order)
  string(APPEND SKILLBOX_PC_LIBS " -lskillbox_${layer}")
endforeach()
string(APPEND SKILLBOX_PC_LIBS " -lquickjs -lm -pthread")
# The prefix is known only at install time (`cmake --install --prefix P`), so the file is written then,
# with P spelled out and normalized as pkg-config users expect (`prefix=/usr/local`, not a path through
# lib/pkgconfig/../..). The configure step fills in everything else and leaves @SKILLBOX_PC_PREFIX@.
set(SKILLBOX_PC_PREFIX "@SKILLBOX_PC_PREFIX@")
configure_file("${PROJECT_SOURCE_DIR}/cmake/skillbox.pc.in" "${PROJECT_BINARY_DIR}/packaging/skillbox.pc.in" @ONLY)
install(CODE "
  set(SKILLBOX_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  cmake_path(ABSOLUTE_PATH SKILLBOX_PC_PREFIX NORMALIZE)
  if(SKILLBOX_PC_PREFIX MATCHES \"./$\")
    string(REGEX REPLACE \"/$\" \"\" SKILLBOX_PC_PREFIX \"\${SKILLBOX_PC_PREFIX}\")
  endif()
  configure_file(\"${PROJECT_BINARY_DIR}/packaging/skillbox.pc.in\" \"${PROJECT_BINARY_DIR}/packaging/skillbox.pc\" @ONLY)
")
install(FILES "${PROJECT_BINARY_DIR}/packaging/skillbox.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
