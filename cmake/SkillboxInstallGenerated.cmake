# Part of the install script (cmake/SkillboxInstall.cmake includes it from install(CODE)): writes the man
# pages and shell completion scripts with the built command and installs them under the prefix.
#
# Generated here rather than at build time so that an install needs no target but the command itself,
# and so that each man page names where the guides really are: the prefix is known only now
# (`cmake --install --prefix P`). Set by the caller:
#   SKILLBOX_CLI      the built skillbox command
#   SKILLBOX_STAGE    a scratch folder in the build tree
#   SKILLBOX_DOCDIR   SKILLBOX_MANDIR SKILLBOX_DATADIR   the GNUInstallDirs folders (relative to the prefix
#                     or absolute)

# `dir` as an absolute, normalized path under the install prefix (without DESTDIR: the path the installed
# system sees).
function(skillbox_installed_path dir out)
  if(NOT IS_ABSOLUTE "${dir}")
    set(dir "${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
  cmake_path(ABSOLUTE_PATH dir NORMALIZE)
  string(REGEX REPLACE "(.)/$" "\\1" dir "${dir}")
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

skillbox_installed_path("${SKILLBOX_DOCDIR}" doc_dir)
skillbox_installed_path("${SKILLBOX_MANDIR}/man1" man_dir)
skillbox_installed_path("${SKILLBOX_DATADIR}" data_dir)

# A fresh stage, so that a page of a command removed since the last install is not installed again.
file(REMOVE_RECURSE "${SKILLBOX_STAGE}")
file(MAKE_DIRECTORY "${SKILLBOX_STAGE}/man1")
execute_process(COMMAND "${SKILLBOX_CLI}" man-pages "${SKILLBOX_STAGE}/man1" --doc-dir "${doc_dir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`${SKILLBOX_CLI} man-pages` failed (${rc}): ${err}")
endif()
foreach(shell bash zsh fish)
  execute_process(COMMAND "${SKILLBOX_CLI}" completion ${shell} OUTPUT_FILE "${SKILLBOX_STAGE}/skillbox.${shell}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`${SKILLBOX_CLI} completion ${shell}` failed (${rc}): ${err}")
  endif()
endforeach()

file(GLOB pages "${SKILLBOX_STAGE}/man1/*.1")
# file(INSTALL) prepends DESTDIR and records each file in install_manifest.txt, as install(FILES) does.
file(INSTALL DESTINATION "${man_dir}" TYPE FILE FILES ${pages})
# Where each shell looks: bash-completion loads completions/skillbox on the first <TAB> after `skillbox`;
# zsh's compinit autoloads _skillbox from $fpath; fish loads vendor_completions.d/skillbox.fish.
file(INSTALL DESTINATION "${data_dir}/bash-completion/completions" TYPE FILE
     FILES "${SKILLBOX_STAGE}/skillbox.bash" RENAME skillbox)
file(INSTALL DESTINATION "${data_dir}/zsh/site-functions" TYPE FILE
     FILES "${SKILLBOX_STAGE}/skillbox.zsh" RENAME _skillbox)
file(INSTALL DESTINATION "${data_dir}/fish/vendor_completions.d" TYPE FILE
     FILES "${SKILLBOX_STAGE}/skillbox.fish" RENAME skillbox.fish)
