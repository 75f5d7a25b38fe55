"""The P4_16 abstract syntax tree: the contract between front end and back end.

Every node is a keyword-only dataclass with `pos: SourcePos` (original file,
line, column of its first token). The parser fills the syntactic fields; the
checker (`compiler/check/`) fills the semantic slots, which default to None:

- `Expression.type`: the resolved `types.P4Type` of every expression (width and
  signedness included: `types.Bits`); integer literals without a width that
  meet a sized operand get that operand's type;
- `Expression.const_value`: the folded value of compile-time constants
  (`int`, `bool`, `str`, or `types.EnumValue`/`types.ErrorValue`; a tuple of
  such values, in field order, for a constant `{...}` initialiser of a
  struct, header, tuple or stack);
- `PathExpression.ref` / `MemberExpression.ref` / `NamedType.ref`: the
  declaration node a name refers to (a `Declaration`, a `Parameter`, a
  `ParserState`, an `EnumMember`/`SerEnumMember`, an `ErrorMember`, a
  `MatchKindMember`, or a `MethodPrototype` for extern methods);
- `MethodCallExpression.call`: a `CallInfo` saying what is called (action,
  function, extern method, extern function, table apply, built-in method such
  as `isValid`, or constructor) and the bound arguments in parameter order;
- `TypeNode.resolved`: the `types.P4Type` a written type denotes;
- a switch label on `t.apply().action_run`: `PathExpression.ref` is the
  ActionDeclaration; table `ActionRef.ref` likewise;
- the callee of a call (`r.read` in `r.read(x, 0)`) has the internal type
  `check.members.Method`; read the call's `CallInfo` instead;
- `Declaration.p4type`: the type a declaration introduces or has (the header
  type for `header H {...}`, the variable's type for `T x;`, the specialised
  extern type for `register<bit<32>>(1024) r;`).

Annotations stay on the nodes (`annotations` list) with their raw token body
and, for the structured `@name[...]` form or for well-known annotations whose
body is an expression list (`@name("x")`, `@id(3)`, `@priority(1)`,
`@field_list(1)`, ...), the parsed expressions in `args`.

Later changes to this module are additive only.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import SourcePos
from .lexer import Token


def _slot() -> Any:
    """A semantic slot: filled by the checker, ignored by equality and repr."""
    return field(default=None, compare=False, repr=False)


@dataclass(kw_only=True)
class Node:
    """Base of every AST node."""

    pos: SourcePos


# ---------------------------------------------------------------- annotations


@dataclass(kw_only=True)
class KeyValue(Node):
    """`key = expression` inside a structured annotation body."""

    key: str
    value: Expression


@dataclass(kw_only=True)
class Annotation(Node):
    """`@name`, `@name(tokens...)`, `@name[expr, ...]` or `@name[k = v, ...]`."""

    name: str
    body: list[Token] = field(default_factory=list)
    structured: bool = False
    args: list[Expression] | None = None
    kv: list[KeyValue] | None = None


def find_annotation(annotations: list[Annotation], name: str) -> Annotation | None:
    """The first annotation called `name`, or None."""
    return next((a for a in annotations if a.name == name), None)


# ---------------------------------------------------------------- types as written


@dataclass(kw_only=True)
class TypeNode(Node):
    """A type as written in the source; `resolved` is the `types.P4Type`."""

    resolved: Any = _slot()


@dataclass(kw_only=True)
class BaseTypeNode(TypeNode):
    """`bool`, `error`, `match_kind`, `string`, `void`, `int`, `bit<W>`, `int<W>`, `varbit<W>`.

    `bit` without a width means `bit<1>`; `int` without a width is the
    arbitrary-precision integer.
    """

    kind: str
    width: Expression | None = None


@dataclass(kw_only=True)
class NamedType(TypeNode):
    """A type name (`H`, `.H` when `is_global`); `ref` is its declaration."""

    name: str
    is_global: bool = False
    ref: Any = _slot()


@dataclass(kw_only=True)
class SpecializedTypeNode(TypeNode):
    """`Base<T1, T2>`: a generic type with type arguments."""

    base: NamedType
    args: list[TypeNode]


@dataclass(kw_only=True)
class HeaderStackTypeNode(TypeNode):
    """`T[size]`."""

    element: TypeNode
    size: Expression


@dataclass(kw_only=True)
class TupleTypeNode(TypeNode):
    """`tuple<T1, ...>`."""

    elements: list[TypeNode]


@dataclass(kw_only=True)
class ListTypeNode(TypeNode):
    """`list<T>`."""

    element: TypeNode


@dataclass(kw_only=True)
class DontCareTypeNode(TypeNode):
    """`_` as a type argument: the checker infers it."""


# ---------------------------------------------------------------- expressions


@dataclass(kw_only=True)
class Expression(Node):
    """Base of expressions: `type` and `const_value` are filled by the checker."""

    type: Any = _slot()
    const_value: Any = _slot()


@dataclass(kw_only=True)
class IntLiteral(Expression):
    """An integer literal: `width` None means arbitrary-precision `int`."""

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(kw_only=True)
class BoolLiteral(Expression):
    """`true` or `false`."""

    value: bool


@dataclass(kw_only=True)
class StringLiteral(Expression):
    """A string literal (value unescaped)."""

    value: str


@dataclass(kw_only=True)
class PathExpression(Expression):
    """A name (`x`, `.x` when `is_global`); `ref` is the declaration it names."""

    name: str
    is_global: bool = False
    ref: Any = _slot()


@dataclass(kw_only=True)
class TypeExpression(Expression):
    """A type used where an expression is expected (`bit<8>` in `bit<8>.minSizeInBits()`)."""

    type_node: TypeNode


@dataclass(kw_only=True)
class MemberExpression(Expression):
    """`expr.member`: field, method, enum member, `error.X`, `t.apply().hit`, ..."""

    expr: Expression
    member: str
    ref: Any = _slot()


@dataclass(kw_only=True)
class IndexExpression(Expression):
    """`expr[index]`: header stack element or tuple element."""

    expr: Expression
    index: Expression


@dataclass(kw_only=True)
class SliceExpression(Expression):
    """`expr[hi:lo]`: bit slice, both bounds compile-time constants."""

    expr: Expression
    hi: Expression
    lo: Expression


@dataclass(kw_only=True)
class UnaryExpression(Expression):
    """`op operand` with op one of `!`, `~`, `-`, `+`."""

    op: str
    operand: Expression


@dataclass(kw_only=True)
class BinaryExpression(Expression):
    """`left op right`.

    op is one of `* / % + - |+| |-| << >> < <= > >= == != & ^ | && || ++`.
    """

    op: str
    left: Expression
    right: Expression


@dataclass(kw_only=True)
class MaskExpression(Expression):
    """`value &&& mask` in a keyset."""

    value: Expression
    mask: Expression


@dataclass(kw_only=True)
class RangeExpression(Expression):
    """`low .. high` in a keyset."""

    low: Expression
    high: Expression


@dataclass(kw_only=True)
class TernaryExpression(Expression):
    """`cond ? then : otherwise`."""

    cond: Expression
    then: Expression
    otherwise: Expression


@dataclass(kw_only=True)
class CastExpression(Expression):
    """`(T) expr`."""

    type_node: TypeNode
    expr: Expression


@dataclass(kw_only=True)
class Argument(Node):
    """A call argument: positional (`name` None), named (`name = value`), or `_` (DontCare)."""

    name: str | None
    value: Expression


class CallKind(enum.Enum):
    """What a `MethodCallExpression` calls (filled by the checker)."""

    ACTION = "action"
    FUNCTION = "function"
    EXTERN_FUNCTION = "extern_function"
    EXTERN_METHOD = "extern_method"
    TABLE_APPLY = "table_apply"
    PARSER_APPLY = "parser_apply"
    CONTROL_APPLY = "control_apply"
    BUILTIN = "builtin"
    CONSTRUCTOR = "constructor"


@dataclass(kw_only=True)
class CallInfo:
    """The checker's resolution of a call.

    `target` by kind: ACTION -> ActionDeclaration; FUNCTION ->
    FunctionDeclaration; EXTERN_FUNCTION -> the ExternFunctionDeclaration of
    the chosen overload; EXTERN_METHOD -> the chosen MethodPrototype;
    TABLE_APPLY -> TableDeclaration; PARSER_APPLY/CONTROL_APPLY -> the
    Instantiation (or parameter) applied; CONSTRUCTOR -> the constructed
    type's declaration (ExternDeclaration, ParserDeclaration,
    ControlDeclaration, PackageTypeDeclaration); BUILTIN -> None.
    `receiver` is the object expression for
    methods (`r` in `r.read(...)`, the header in `h.isValid()`); `builtin` the
    name for BUILTIN (`isValid`, `setValid`, `setInvalid`, `push_front`,
    `pop_front`, `minSizeInBits`, `minSizeInBytes`, `maxSizeInBits`,
    `maxSizeInBytes`); `args` one entry per parameter in declaration order
    (None where an optional/default parameter was left out); `type_args` the
    P4Types bound to the callee's type parameters.
    """

    kind: CallKind
    target: Any = None
    receiver: Expression | None = None
    builtin: str | None = None
    params: list[Any] = field(default_factory=list)
    args: list[Expression | None] = field(default_factory=list)
    type_args: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class MethodCallExpression(Expression):
    """`callee<type_args>(args)`; `call` is the checker's `CallInfo`."""

    callee: Expression
    type_args: list[TypeNode] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    call: CallInfo | None = _slot()


@dataclass(kw_only=True)
class ListExpression(Expression):
    """`{e1, e2, ...}`: a tuple/list/header/struct initialiser by position."""

    components: list[Expression]
    has_rest: bool = False


@dataclass(kw_only=True)
class NamedExpression(Node):
    """`name = value` inside a struct expression."""

    name: str
    value: Expression


@dataclass(kw_only=True)
class StructExpression(Expression):
    """`{a = e1, b = e2}`; `has_rest` for a trailing `...` (other fields don't-care)."""

    fields: list[NamedExpression]
    has_rest: bool = False


@dataclass(kw_only=True)
class InvalidExpression(Expression):
    """`{#}`: an invalid header or header union."""


@dataclass(kw_only=True)
class DontCareExpression(Expression):
    """`_`: don't-care argument or keyset element."""


@dataclass(kw_only=True)
class DefaultExpression(Expression):
    """`default` as a keyset (matches anything)."""


@dataclass(kw_only=True)
class ThisExpression(Expression):
    """`this` inside an abstract method implementation."""


# ---------------------------------------------------------------- declarations


class Direction(enum.Enum):
    """A parameter's direction."""

    NONE = ""
    IN = "in"
    OUT = "out"
    INOUT = "inout"


@dataclass(kw_only=True)
class Declaration(Node):
    """Base of everything that introduces a name; `p4type` is filled by the checker."""

    name: str
    annotations: list[Annotation] = field(default_factory=list)
    p4type: Any = _slot()


@dataclass(kw_only=True)
class Parameter(Declaration):
    """A parameter: direction, type, optional default value."""

    direction: Direction = Direction.NONE
    type_node: TypeNode
    default: Expression | None = None


@dataclass(kw_only=True)
class TypeParameter(Declaration):
    """A type variable of a generic declaration (`T` in `extern E<T>`)."""


@dataclass(kw_only=True)
class ConstantDeclaration(Declaration):
    """`const T name = value;` (top level, local, or statement)."""

    type_node: TypeNode
    value: Expression


@dataclass(kw_only=True)
class VariableDeclaration(Declaration):
    """`T name [= init];`."""

    type_node: TypeNode
    init: Expression | None = None


@dataclass(kw_only=True)
class TypedefDeclaration(Declaration):
    """`typedef T name;` (transparent alias) or `type T name;` (`is_newtype`: a new type)."""

    type_node: TypeNode
    is_newtype: bool = False


@dataclass(kw_only=True)
class StructField(Declaration):
    """A field of a header, header union or struct."""

    type_node: TypeNode


@dataclass(kw_only=True)
class HeaderDeclaration(Declaration):
    """`header H<T...> { fields }`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    fields: list[StructField] = field(default_factory=list)


@dataclass(kw_only=True)
class HeaderUnionDeclaration(Declaration):
    """`header_union U<T...> { fields }`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    fields: list[StructField] = field(default_factory=list)


@dataclass(kw_only=True)
class StructDeclaration(Declaration):
    """`struct S<T...> { fields }`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    fields: list[StructField] = field(default_factory=list)


@dataclass(kw_only=True)
class EnumMember(Declaration):
    """A member of a plain enum."""


@dataclass(kw_only=True)
class EnumDeclaration(Declaration):
    """`enum E { A, B }`."""

    members: list[EnumMember] = field(default_factory=list)


@dataclass(kw_only=True)
class SerEnumMember(Declaration):
    """A member of a serializable enum with its value expression."""

    value: Expression


@dataclass(kw_only=True)
class SerEnumDeclaration(Declaration):
    """`enum bit<8> E { A = 1, B = 2 }`."""

    underlying: TypeNode
    members: list[SerEnumMember] = field(default_factory=list)


@dataclass(kw_only=True)
class ErrorMember(Declaration):
    """A member of `error`."""


@dataclass(kw_only=True)
class ErrorDeclaration(Node):
    """`error { A, B }` (the members add to the single global `error` type)."""

    members: list[ErrorMember] = field(default_factory=list)


@dataclass(kw_only=True)
class MatchKindMember(Declaration):
    """A member of `match_kind`."""


@dataclass(kw_only=True)
class MatchKindDeclaration(Node):
    """`match_kind { exact, ternary }`."""

    members: list[MatchKindMember] = field(default_factory=list)


@dataclass(kw_only=True)
class MethodPrototype(Declaration):
    """An extern method, abstract method, constructor, or extern function prototype.

    A constructor has `is_constructor` and no `return_type`.
    """

    return_type: TypeNode | None = None
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    is_abstract: bool = False
    is_constructor: bool = False


@dataclass(kw_only=True)
class ExternDeclaration(Declaration):
    """`extern E<T...> { constructors; methods; }` (an extern object type)."""

    type_params: list[TypeParameter] = field(default_factory=list)
    methods: list[MethodPrototype] = field(default_factory=list)


@dataclass(kw_only=True)
class ExternFunctionDeclaration(Declaration):
    """`extern R f<T...>(params);` (an extern function)."""

    prototype: MethodPrototype


@dataclass(kw_only=True)
class ParserTypeDeclaration(Declaration):
    """`parser P<T...>(params);`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(kw_only=True)
class ControlTypeDeclaration(Declaration):
    """`control C<T...>(params);`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(kw_only=True)
class PackageTypeDeclaration(Declaration):
    """`package P<T...>(params);`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(kw_only=True)
class Instantiation(Declaration):
    """`T(args) name;` or `T(args) name = { abstract method implementations };`."""

    type_node: TypeNode
    args: list[Argument] = field(default_factory=list)
    initializer: list[Declaration] | None = None


@dataclass(kw_only=True)
class BlockStatement(Node):
    """`{ statements and local declarations }` (also usable as a statement)."""

    annotations: list[Annotation] = field(default_factory=list)
    components: list[Node] = field(default_factory=list)


@dataclass(kw_only=True)
class FunctionDeclaration(Declaration):
    """`R f<T...>(params) { body }`."""

    return_type: TypeNode
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement


@dataclass(kw_only=True)
class ActionDeclaration(Declaration):
    """`action a(params) { body }`: directional parameters first, then action data."""

    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement


@dataclass(kw_only=True)
class KeyElement(Node):
    """`expr : match_kind @annotations;` in a table key."""

    expr: Expression
    match_kind: PathExpression
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(kw_only=True)
class ActionRef(Node):
    """An action in `actions = {...}` or `default_action`: name plus (possibly partial) args."""

    expr: Expression
    annotations: list[Annotation] = field(default_factory=list)
    ref: Any = _slot()
    args: list[Argument] = field(default_factory=list)


@dataclass(kw_only=True)
class Entry(Node):
    """One entry of `entries`: keyset `: action;`, optional priority."""

    keyset: list[Expression]
    action: ActionRef
    priority: Expression | None = None
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(kw_only=True)
class TableProperty(Node):
    """Base of table properties; `name` is the property name as written."""

    name: str
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(kw_only=True)
class KeyProperty(TableProperty):
    """`key = { ... }`."""

    elements: list[KeyElement] = field(default_factory=list)


@dataclass(kw_only=True)
class ActionsProperty(TableProperty):
    """`actions = { ... }`."""

    actions: list[ActionRef] = field(default_factory=list)


@dataclass(kw_only=True)
class EntriesProperty(TableProperty):
    """`[const] entries = { ... }`."""

    entries: list[Entry] = field(default_factory=list)


@dataclass(kw_only=True)
class DefaultActionProperty(TableProperty):
    """`[const] default_action = a(args);`."""

    action: ActionRef


@dataclass(kw_only=True)
class ValueProperty(TableProperty):
    """Any other `[const] name = expression;` (size, implementation, counters, custom)."""

    value: Expression


@dataclass(kw_only=True)
class TableDeclaration(Declaration):
    """`table t { properties }`."""

    properties: list[TableProperty] = field(default_factory=list)

    def property(self, name: str) -> TableProperty | None:
        """The property called `name`, or None."""
        return next((p for p in self.properties if p.name == name), None)


@dataclass(kw_only=True)
class ValueSetDeclaration(Declaration):
    """`value_set<T>(size) name;`."""

    element_type: TypeNode
    size: Expression


@dataclass(kw_only=True)
class SelectCase(Node):
    """`keyset : state;` in a select expression."""

    keyset: Expression
    state: PathExpression


@dataclass(kw_only=True)
class SelectExpression(Expression):
    """`select(exprs) { cases }`."""

    exprs: list[Expression]
    cases: list[SelectCase]


@dataclass(kw_only=True)
class ParserState(Declaration):
    """`state name { statements transition ...; }`; `transition` None if omitted."""

    components: list[Node] = field(default_factory=list)
    transition: Expression | None = None


@dataclass(kw_only=True)
class ParserDeclaration(Declaration):
    """`parser P(params)(ctor params) { locals states }`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    constructor_params: list[Parameter] = field(default_factory=list)
    locals: list[Declaration] = field(default_factory=list)
    states: list[ParserState] = field(default_factory=list)


@dataclass(kw_only=True)
class ControlDeclaration(Declaration):
    """`control C(params)(ctor params) { locals apply { body } }`."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    constructor_params: list[Parameter] = field(default_factory=list)
    locals: list[Declaration] = field(default_factory=list)
    body: BlockStatement


# ---------------------------------------------------------------- statements


@dataclass(kw_only=True)
class Statement(Node):
    """Base of statements."""


@dataclass(kw_only=True)
class AssignmentStatement(Statement):
    """`left = right;` or compound `left op= right;` (`op` e.g. `+`, `|+|`)."""

    left: Expression
    right: Expression
    op: str | None = None


@dataclass(kw_only=True)
class MethodCallStatement(Statement):
    """`call;`."""

    call: MethodCallExpression


@dataclass(kw_only=True)
class IfStatement(Statement):
    """`if (cond) then [else otherwise]`."""

    cond: Expression
    then: Node
    otherwise: Node | None = None


@dataclass(kw_only=True)
class SwitchCase(Node):
    """`label: block` or fall-through `label:` (body None); label `DefaultExpression` for default."""

    label: Expression
    body: BlockStatement | None = None


@dataclass(kw_only=True)
class SwitchStatement(Statement):
    """`switch (expr) { cases }` on `t.apply().action_run` or an enum/bit value."""

    expr: Expression
    cases: list[SwitchCase] = field(default_factory=list)


@dataclass(kw_only=True)
class ReturnStatement(Statement):
    """`return [value];`."""

    value: Expression | None = None


@dataclass(kw_only=True)
class ExitStatement(Statement):
    """`exit;`."""


@dataclass(kw_only=True)
class EmptyStatement(Statement):
    """`;`."""


@dataclass(kw_only=True)
class BreakStatement(Statement):
    """`break;` inside a `for` loop."""


@dataclass(kw_only=True)
class ContinueStatement(Statement):
    """`continue;` inside a `for` loop."""


@dataclass(kw_only=True)
class ForStatement(Statement):
    """`for (init; cond; updates) body`."""

    init: list[Node] = field(default_factory=list)
    cond: Expression | None = None
    updates: list[Node] = field(default_factory=list)
    body: Node


@dataclass(kw_only=True)
class ForInStatement(Statement):
    """`for (T x in collection) body` (`decl` holds the loop variable)."""

    decl: VariableDeclaration | None = None
    var: PathExpression | None = None
    collection: Expression
    body: Node


# ---------------------------------------------------------------- program


@dataclass(kw_only=True)
class Program(Node):
    """A whole preprocessed source: top-level declarations in order."""

    declarations: list[Node] = field(default_factory=list)
