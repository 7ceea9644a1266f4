# ctest package.consumer: install BUILD_DIR into WORK_DIR/prefix, configure and build the consumer
# project CONSUMER_SOURCE against it with find_package(qsweep), and run it. Any failing step fails
# the test with that step's output.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(failed)
    message(FATAL_ERROR "package.consumer: ${what} failed (${failed}):\n${out}")
  endif()
  message(STATUS "package.consumer: ${what}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/build
  -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run the consumer" ${WORK_DIR}/build/qsweep_consumer)
