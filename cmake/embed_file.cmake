# Writes OUT: a C++ file defining `std::string_view FUNCTION()` with the contents of IN.
file(READ "${IN}" content)
file(WRITE "${OUT}.tmp" "// Generated from ${NAME} by cmake/embed_file.cmake. Do not edit.\n#include <string_view>\n\nnamespace boxoffice {\n\nstd::string_view ${FUNCTION}() {\n  static constexpr std::string_view k = R\"boxoffice_embed(${content})boxoffice_embed\";\n  return k;\n}\n\n}  // namespace boxoffice\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
