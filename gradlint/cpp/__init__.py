"""The C++ front end: a lexer that blanks comments, literals and preprocessor lines
(keeping every offset), and the scope model the C++ rules read."""
