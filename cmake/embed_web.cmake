# Writes OUT: a C++ file defining boxoffice::api::EmbeddedWebFiles(), the seat picker's
# files under SRC/web (name → contents). Run at build time by CMake; src/api/web_app.cc
# gives them their content types, their version (a hash of them all) and their headers.
file(GLOB files "${SRC}/web/*.html" "${SRC}/web/*.js" "${SRC}/web/*.css" "${SRC}/web/*.svg")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" content)
  string(FIND "${content}" ")boxoffice_web\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} holds the raw-string delimiter )boxoffice_web\"")
  endif()
  string(APPEND body "      {\"${name}\", R\"boxoffice_web(${content})boxoffice_web\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from web/ by cmake/embed_web.cmake. Do not edit.\n#include \"api/web_app.h\"\n\nnamespace boxoffice::api {\n\nconst std::vector<WebFile>& EmbeddedWebFiles() {\n  static const std::vector<WebFile> k = {\n${body}  };\n  return k;\n}\n\n}  // namespace boxoffice::api\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
