# Writes OUTPUT, the definition of qsweep::git_commit(): the commit of SOURCE_DIR (12 hex digits),
# "-dirty" when tracked files differ from it, "unknown" outside a git checkout. Runs at every
# build (cmake -DSOURCE_DIR=... -DOUTPUT=... -P git-commit.cmake) and rewrites OUTPUT only when
# its text changes, so an unchanged tree recompiles nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit unknown)
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
    OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit -dirty)
  endif()
endif()
set(text "// Generated at build time by cmake/git-commit.cmake; do not edit.
#include \"qsweep/version.hpp\"

const char* qsweep::git_commit() { return \"${commit}\"; }
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
