# The one-way layers (ci/layers.txt): the check over the real tree, its negative control, and the
# README's layout table as the layers file's picture.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME layering/check COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/ci/layering.py
                                     --root ${PROJECT_SOURCE_DIR})
add_test(NAME layering/planted-wrong-way-fails
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cmake/layering_control.sh ${PROJECT_SOURCE_DIR})
add_test(NAME layering/readme-table COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/ci/layering.py
                                            --root ${PROJECT_SOURCE_DIR} --check-readme)
set_tests_properties(layering/check layering/planted-wrong-way-fails layering/readme-table
                     PROPERTIES LABELS unit TIMEOUT 60)
