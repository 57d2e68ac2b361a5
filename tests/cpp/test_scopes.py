"""The scope tree: kinds and names from headers, preprocessor branches, broken input."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gradlint.cpp.model import CppFile


def _tree(text: str):
    return CppFile("x.cpp", text).tree


def _kinds(text: str):
    return [(scope.kind, scope.name) for scope in _tree(text).scopes]


def test_namespaces_classes_methods_and_out_of_line_definitions():
    text = """
namespace ops { namespace {
class Square : public torch::autograd::Function<Square> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) { return x; }
  static variable_list backward(AutogradContext* ctx, variable_list grads);
};
} }
variable_list ops::Square::backward(AutogradContext* ctx, variable_list grads) { return grads; }
"""
    tree = _tree(text)
    assert [(s.kind, s.name) for s in tree.scopes] == [
        ("namespace", "ops"), ("namespace", ""), ("class", "Square"), ("function", "forward"),
        ("function", "backward"),
    ]
    square = tree.scopes[2]
    assert square.bases == "public torch::autograd::Function<Square>"
    assert tree.scopes[-1].qualifier == "Square"
    assert not tree.warnings


def test_blocks_lambdas_initializers_and_control_statements():
    text = """
int main() {
  for (int i = 0; i < 3; ++i) { work(i); }
  auto f = [&](int x) mutable -> int { return x; };
  std::vector<int> v{1, 2};
  if (x) { } else { }
  { plain(); }
  return 0;
}
"""
    assert _kinds(text) == [
        ("function", "main"), ("block", ""), ("lambda", ""), ("init", ""), ("block", ""), ("block", ""),
        ("block", ""),
    ]


def test_registrations_and_lambdas_passed_to_impl():
    text = """
TORCH_LIBRARY_IMPL(myops, AutogradCPU, m) {
  m.impl("myops::scale", [](const at::Tensor& x) -> at::Tensor& { return x; });
}
"""
    tree = _tree(text)
    registration, lam = tree.scopes
    assert (registration.kind, registration.arguments) == ("registration", "myops, AutogradCPU, m")
    assert lam.kind == "lambda" and lam.parent is registration


def test_objective_c_methods_are_functions():
    text = """
@implementation Runner {
  torch::jit::Module _module;
}
- (NSArray<NSNumber*>*)predict:(void*)buffer length:(int)length {
  if (buffer) { return nil; }
  return nil;
}
@end
"""
    assert _kinds(text) == [("block", ""), ("method", "predict"), ("block", "")]


def test_scope_at_finds_the_innermost_scope():
    text = "void f() {\n  { int inner; }\n  int outer;\n}\nint global;\n"
    tree = _tree(text)
    assert tree.scope_at(text.index("inner")).kind == "block"
    assert tree.scope_at(text.index("outer")).name == "f"
    assert tree.scope_at(text.index("global")).kind == "file"


def test_preprocessor_branches_that_open_braces_differently_follow_the_first():
    text = """
#ifdef USE_FAST
void run_fast(int n) {
#else
void run_slow(int n) {
#endif
  body(n);
}
void after() {}
"""
    tree = _tree(text)
    assert not tree.warnings
    assert [(s.kind, s.name) for s in tree.scopes] == [("function", "run_fast"), ("function", "after")]
    assert tree.scope_at(text.index("body")).name == "run_fast"


def test_balanced_branches_all_count_and_nested_chains_settle():
    text = """
#if A
void a() {}
#elif B
void b() {}
#else
#  if C
void c() {
#  else
void d() {
#  endif
}
#endif
void e() {}
"""
    tree = _tree(text)
    assert not tree.warnings
    assert [s.name for s in tree.scopes] == ["a", "b", "c", "e"]
    assert tree.scope_at(text.index("void e")).kind == "file"


def test_unbalanced_and_truncated_input_gives_a_tree_and_warnings():
    extra = _tree("void f() { } }\nvoid g() { }\n")
    assert [message for _, message in extra.warnings] == ["unbalanced `}`: no matching `{`"]
    assert [s.name for s in extra.scopes] == ["f", "g"]
    truncated_text = "void f() {\n  if (x) {\n    work();\n"
    truncated = _tree(truncated_text)
    assert len(truncated.warnings) == 2
    assert all(scope.close == len(truncated_text) for scope in truncated.scopes)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["{", "}", ";", "(", ")", "void f()", "class A : B<C>", "[]", "#if X\n",
                                 "#else\n", "#endif\n", "\n", "x", "-(id)m", "if (a)", "namespace n"]),
                max_size=60))
def test_any_token_soup_gives_properly_nested_scopes(pieces):
    text = "".join(pieces)
    tree = _tree(text)
    for scope in tree.scopes:
        assert scope.kind in ("namespace", "class", "function", "method", "lambda", "registration", "block",
                              "init")
        assert scope.open < scope.close <= len(text)
        parent = scope.parent
        assert parent.kind == "file" or parent.open < scope.open < scope.close <= parent.close


def test_thousands_of_nested_blocks_classify_without_recursing():
    depth = 5000
    text = "void f() {\n" + "if (x) {\n" * depth + "int y;\n" + "}\n" * depth + "}\n"
    innermost = _tree(text).scope_at(text.index("int y"))
    assert innermost.kind == "block"
    assert [scope.kind for scope in innermost.ancestors()][-2:] == ["function", "file"]


def test_extern_c_linkage_blocks_are_transparent_and_extern_c_definitions_are_functions():
    text = 'extern "C" {\nint a;\n}\nextern "C" JNIEXPORT jfloat JNICALL Java_Model_score(JNIEnv* env, jobject self) {\n  return 0;\n}\n'
    assert _kinds(text) == [("namespace", ""), ("function", "Java_Model_score")]


def test_code_under_if_0_is_blanked_for_the_rules():
    from gradlint.cpp.model import CppFile

    text = (
        "#if 0\nvoid old() { at::AutoNonVariableTypeMode g; }\n#if defined(X)\n{\n#endif\n"
        "#else\nvoid live() { at::AutoNonVariableTypeMode g; }\n#endif\n"
        "#if 1\nvoid kept() { at::AutoNonVariableTypeMode g; }\n#else\nvoid dropped() { at::AutoNonVariableTypeMode g; }\n#endif\n"
        "#ifdef FOO\nvoid maybe() { at::AutoNonVariableTypeMode g; }\n#elif 0\nvoid never() { at::AutoNonVariableTypeMode g; }\n#endif\n"
        "#if false // off\nvoid off() {}\n#endif\n"
    )
    file = CppFile("k.cpp", text)
    assert [file.line_of(guard.type_start) for guard in file.guards] == [7, 10, 15]
    assert "old" not in file.code and "dropped" not in file.code and "never" not in file.code
    assert "off()" not in file.code
    assert len(file.code) == len(text) and file.code.count("\n") == text.count("\n")
    assert not file.tree.warnings  # the brace inside the dead branch is not counted
