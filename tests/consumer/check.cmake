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
# Once as a C++-only project, once with C enabled too: the package finds MPI either way.
foreach(with_c OFF ON)
  set(build ${WORK_DIR}/build-c-${with_c})
  step("configure the consumer (C ${with_c})" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${build}
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCONSUMER_WITH_C=${with_c})
  step("build the consumer (C ${with_c})" ${CMAKE_COMMAND} --build ${build})
  step("run the consumer (C ${with_c})" ${build}/qsweep_consumer)
endforeach()
