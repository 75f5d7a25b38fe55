"""name_constants: an integer literal becomes a named constant declared just before the
top-level declaration that uses it: `x = y + 8w5;` becomes `const bit<8> mut_const_0 =
8w5;` ... `x = y + mut_const_0;`.

A constant may stand wherever a literal may (slice bounds, stack indices, keysets, table
properties, widths of types are compile-time expressions), so every literal the checker
typed as `bit<W>`, `int<W>` or `int` in code is a site; literals in annotations, in
written types and in table keys (whose text is the key's control-plane name) are left
alone.
"""

from __future__ import annotations

from .. import ast, types
from .site import Site
from .tree import Names, children, key_name_nodes, own_declarations, replace_child, type_node_for

NAME = "name_constants"


def name_constants(program: ast.Program, file: str) -> list[Site]:
    """Every typed integer literal in the code of `file`'s declarations."""
    names = Names(program)
    keys = key_name_nodes(program)
    sites = []
    for decl in own_declarations(program, file):
        for parent, literal in _literals(decl):
            if id(literal) not in keys:
                sites.append(_site(names, program, decl, parent, literal))
    return sites


def _literals(node: ast.Node) -> list[tuple[ast.Node, ast.IntLiteral]]:
    """(parent, literal) pairs under `node`, not entering annotations or written types."""
    out = []
    for child in children(node):
        if isinstance(child, ast.Annotation | ast.TypeNode):
            continue
        if isinstance(child, ast.IntLiteral):
            if _type_node(child) is not None:
                out.append((node, child))
            continue
        out += _literals(child)
    return out


def _type_node(literal: ast.IntLiteral) -> ast.TypeNode | None:
    if isinstance(literal.type, types.InfInt):
        return ast.BaseTypeNode(pos=literal.pos, kind="int")
    if isinstance(literal.type, types.Bits):
        return type_node_for(literal.type, literal.pos)
    return None


def _site(names: Names, program: ast.Program, decl: ast.Node, parent: ast.Node, literal: ast.IntLiteral) -> Site:
    def rewrite() -> None:
        name = names.fresh("mut_const")
        const = ast.ConstantDeclaration(pos=literal.pos, name=name, type_node=_type_node(literal), value=literal)
        ref = ast.PathExpression(pos=literal.pos, name=name)
        ref.type = literal.type
        replace_child(parent, literal, ref)
        program.declarations.insert(next(i for i, d in enumerate(program.declarations) if d is decl), const)

    return Site(NAME, literal.pos, f"`{literal.text or literal.value}` named", rewrite)
