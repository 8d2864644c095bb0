# Runs PROGRAM with ARGS and writes its standard output to OUTPUT (only when the run succeeds).
#   cmake -DPROGRAM=... -DARGS="--a;--b" -DOUTPUT=... -P run_to_file.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE text RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} failed (${failed})")
endif()
file(WRITE ${OUTPUT}.partial "${text}")
file(RENAME ${OUTPUT}.partial ${OUTPUT})
