# Writes OUTPUT, the man page of PROGRAM compressed as Debian wants it (gzip -9n), with help2man from
# the program's own --help and --version.
# The NAME line is the first line of --help (after "NAME: "); programs with subcommands get a
# SUBCOMMANDS section holding each subcommand's --help.
#   cmake -DHELP2MAN=... -DPROGRAM=... -DNAME=tessera-pack -DOUTPUT=....1 -P man_page.cmake
execute_process(COMMAND ${PROGRAM} --help OUTPUT_VARIABLE help RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${PROGRAM} --help failed (${failed})")
endif()
string(REGEX MATCH "^[^\n]*" summary "${help}")
string(REGEX REPLACE "^${NAME}: " "" summary "${summary}")
string(REGEX REPLACE "[.:]$" "" summary "${summary}")
string(REPLACE ";" "," summary "${summary}")  # a CMake list separator would split the argument

set(include_file ${OUTPUT}.include)
file(REMOVE ${include_file})
# CLI11 lists subcommands under "Subcommands:" as "  NAME   description".
string(FIND "${help}" "\nSubcommands:\n" at)
if(at GREATER -1)
  string(SUBSTRING "${help}" ${at} -1 tail)
  string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*" names "${tail}")
  set(section "[SUBCOMMANDS]\n")
  foreach(name ${names})
    string(STRIP "${name}" name)
    execute_process(COMMAND ${PROGRAM} ${name} --help OUTPUT_VARIABLE sub_help RESULT_VARIABLE failed)
    if(failed)
      continue()
    endif()
    string(REPLACE "\\" "\\e" sub_help "${sub_help}")
    string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" sub_help "${sub_help}")
    string(APPEND section ".SS ${name}\n.nf\n${sub_help}\n.fi\n")
  endforeach()
  file(WRITE ${include_file} "${section}")
endif()

execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr --name=${summary} --opt-include=${include_file}
          --output=${OUTPUT}.partial ${PROGRAM}
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "help2man failed for ${PROGRAM}")
endif()
execute_process(COMMAND gzip -9n -f ${OUTPUT}.partial RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "gzip failed for ${OUTPUT}")
endif()
file(RENAME ${OUTPUT}.partial.gz ${OUTPUT})
file(REMOVE ${include_file})
