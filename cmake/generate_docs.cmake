# Writes the manual page and the shell completions by running the built program, so they come
# from the same command tree and help strings as --help. Called with -DCLOUDFIT=<binary>
# -DOUT=<directory>.
file(MAKE_DIRECTORY ${OUT}/man/man1 ${OUT}/completions)
foreach(job "manpage;man/man1/cloudfit.1"
            "completion;bash;completions/cloudfit.bash"
            "completion;zsh;completions/_cloudfit"
            "completion;fish;completions/cloudfit.fish")
  list(POP_BACK job output)
  execute_process(COMMAND ${CLOUDFIT} ${job} OUTPUT_FILE ${OUT}/${output}.tmp RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cloudfit ${job} failed (${rc})")
  endif()
  file(RENAME ${OUT}/${output}.tmp ${OUT}/${output})
endforeach()
