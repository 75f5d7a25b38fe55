"""Parser and control definitions: states, transitions and select, locals, actions, tables."""

from __future__ import annotations

from .. import ast
from .declarations import DeclarationParser
from .stream import describe


class BlockParser(DeclarationParser):
    """Parser states and control locals (actions, tables, value sets)."""

    def parser_decl(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """A parser type declaration or a parser definition."""
        kw, name, type_params, params = self._type_decl_head("parser")
        if self.accept(";"):
            return ast.ParserTypeDeclaration(
                pos=kw.pos,
                name=name.text,
                annotations=annotations,
                type_params=type_params,
                params=params,
            )
        ctor = self._constructor_params()
        self.expect("{", "'{' or ';'")
        locals_: list[ast.Declaration] = []
        states: list[ast.ParserState] = []
        while not self.accept("}"):
            l_annotations = self.annotations()
            if self.at("state"):
                states.append(self.parser_state(l_annotations))
            elif states:
                raise self.error(f"syntax error: expected a state, found {describe(self.peek())}")
            else:
                locals_.append(self.local_declaration(l_annotations, in_parser=True))
        return ast.ParserDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, type_params=type_params, params=params,
            constructor_params=ctor, locals=locals_, states=states,
        )  # fmt: skip

    def parser_state(self, annotations: list[ast.Annotation]) -> ast.ParserState:
        """`state name { statements [transition ...] }`."""
        kw = self.advance()
        name = self.name("a state name")
        self.expect("{")
        components: list[ast.Node] = []
        transition = None
        while not self.accept("}"):
            if self.at("transition"):
                self.advance()
                transition = self.transition_target()
                self.expect("}", "'}' (the transition ends the state)")
                break
            components.append(self.statement())
        return ast.ParserState(
            pos=kw.pos,
            name=name.text,
            annotations=annotations,
            components=components,
            transition=transition,
        )

    def transition_target(self) -> ast.Expression:
        """`name;` or `select(...) { cases }`."""
        if self.at("select"):
            return self.select()
        tok = self.peek()
        target = self.expression()
        if not isinstance(target, ast.PathExpression):
            raise self.error("syntax error: a transition goes to a state name or a select", tok)
        self.expect(";")
        return target

    def select(self) -> ast.SelectExpression:
        """`select(e1, e2) { keyset: state; ... }`."""
        kw = self.expect("select")
        self.expect("(")
        # `select()` with no expressions is valid P4 (its cases are `default` or `_`).
        exprs = [] if self.at(")") else [self.expression()]
        while exprs and self.accept(","):
            exprs.append(self.expression())
        self.expect(")", "')' or ','")
        self.expect("{")
        cases = []
        while not self.accept("}"):
            pos = self.peek().pos
            keyset = self.keyset()
            self.expect(":")
            state = self.name("a state name")
            self.expect(";")
            cases.append(
                ast.SelectCase(
                    pos=pos, keyset=keyset, state=ast.PathExpression(pos=state.pos, name=state.text)
                )
            )
        return ast.SelectExpression(pos=kw.pos, exprs=exprs, cases=cases)

    def keyset(self) -> ast.Expression:
        """A keyset: `(k1, k2)` tuple or one simple keyset."""
        if self.at("("):
            tup = self.speculate(self._tuple_keyset)
            if tup is not None:
                return tup
        return self.simple_keyset()

    def _tuple_keyset(self) -> ast.Expression:
        open_tok = self.expect("(")
        items = [self.simple_keyset()]
        while self.accept(","):
            items.append(self.simple_keyset())
        self.expect(")")
        if not self.at(":"):
            raise self.error("not a tuple keyset")
        if len(items) == 1:
            return items[0]
        return ast.ListExpression(pos=open_tok.pos, components=items)

    def simple_keyset(self) -> ast.Expression:
        """`default`, `_`, `e`, `e &&& m`, `lo .. hi`."""
        tok = self.peek()
        if self.accept("default"):
            return ast.DefaultExpression(pos=tok.pos)
        if self.at("_") and self.peek(1).kind in (",", ")", ":"):
            self.advance()
            return ast.DontCareExpression(pos=tok.pos)
        value = self.expression()
        if self.accept("&&&"):
            return ast.MaskExpression(pos=tok.pos, value=value, mask=self.expression())
        if self.accept(".."):
            return ast.RangeExpression(pos=tok.pos, low=value, high=self.expression())
        return value

    def control_decl(self, annotations: list[ast.Annotation]) -> ast.Declaration:
        """A control type declaration or a control definition."""
        kw, name, type_params, params = self._type_decl_head("control")
        if self.accept(";"):
            return ast.ControlTypeDeclaration(
                pos=kw.pos,
                name=name.text,
                annotations=annotations,
                type_params=type_params,
                params=params,
            )
        ctor = self._constructor_params()
        self.expect("{", "'{' or ';'")
        locals_: list[ast.Declaration] = []
        while not self.at("apply"):
            if self.at("}", "EOF"):
                raise self.error(f"syntax error: control {name.text} has no apply block")
            locals_.append(self.local_declaration(self.annotations(), in_parser=False))
        self.advance()
        body = self.block([])
        self.expect("}", "'}' ending the control (nothing may follow the apply block)")
        return ast.ControlDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, type_params=type_params, params=params,
            constructor_params=ctor, locals=locals_, body=body,
        )  # fmt: skip

    def local_declaration(
        self, annotations: list[ast.Annotation], in_parser: bool
    ) -> ast.Declaration:
        """A parser or control local: constant, variable, instantiation, action, table, value_set."""
        tok = self.peek()
        if tok.kind == "const":
            return self.constant(annotations)
        if tok.kind == "action" and not in_parser:
            return self.action(annotations)
        if tok.kind == "table" and not in_parser:
            return self.table(annotations)
        if tok.kind == "value_set" and in_parser:
            return self.value_set(annotations)
        if tok.kind in ("action", "table", "value_set"):
            where = "parser" if in_parser else "control"
            raise self.error(f"a {tok.kind} may not be declared in a {where}")
        decl = self.typed_declaration(annotations, top_level=False)
        assert isinstance(decl, ast.Declaration)
        return decl

    def value_set(self, annotations: list[ast.Annotation]) -> ast.ValueSetDeclaration:
        """`value_set<T>(size) name;`."""
        kw = self.expect("value_set")
        self.expect("<")
        element = self.type_ref()
        self.expect(">")
        self.expect("(")
        size = self.expression()
        self.expect(")")
        name = self.name("a value_set name")
        self.expect(";")
        return ast.ValueSetDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, element_type=element, size=size
        )

    # ------------------------------------------------------------ actions and tables

    def action(self, annotations: list[ast.Annotation]) -> ast.ActionDeclaration:
        """`action name(params) { body }`."""
        kw = self.expect("action")
        name = self.name("an action name")
        params = self.parameters()
        body = self.block([])
        return ast.ActionDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, params=params, body=body
        )

    def table(self, annotations: list[ast.Annotation]) -> ast.TableDeclaration:
        """`table name { properties }`."""
        kw = self.expect("table")
        name = self.name("a table name")
        if self.at("(") and self.peek(1).kind == ")":
            # `table t() { ... }`: the empty parameter list of early P4_16, which p4c takes.
            self.advance()
            self.advance()
        self.expect("{")
        properties: list[ast.TableProperty] = []
        while not self.accept("}"):
            properties.append(self.table_property())
        return ast.TableDeclaration(
            pos=kw.pos, name=name.text, annotations=annotations, properties=properties
        )

    def table_property(self) -> ast.TableProperty:
        """One table property."""
        annotations = self.annotations()
        pos = self.peek().pos
        is_const = bool(self.accept("const"))
        prop = self.name("a table property name")
        self.expect("=", f"'=' after the table property {prop.text}")
        if prop.text == "key":
            return ast.KeyProperty(
                pos=pos,
                name="key",
                is_const=is_const,
                annotations=annotations,
                elements=self.key_elements(),
            )
        if prop.text == "actions":
            return ast.ActionsProperty(
                pos=pos,
                name="actions",
                is_const=is_const,
                annotations=annotations,
                actions=self.action_list(),
            )
        if prop.text == "entries":
            return ast.EntriesProperty(
                pos=pos, name="entries", is_const=is_const, annotations=annotations,
                entries=self.entries(is_const),
            )  # fmt: skip
        if prop.text == "default_action":
            action = self.action_ref([])
            self.expect(";")
            return ast.DefaultActionProperty(
                pos=pos,
                name="default_action",
                is_const=is_const,
                annotations=annotations,
                action=action,
            )
        value = self.expression()
        self.expect(";")
        return ast.ValueProperty(
            pos=pos, name=prop.text, is_const=is_const, annotations=annotations, value=value
        )

    def key_elements(self) -> list[ast.KeyElement]:
        """`{ expr : match_kind @annotations; ... }`."""
        self.expect("{")
        elements = []
        while not self.accept("}"):
            pos = self.peek().pos
            expr = self.expression()
            self.expect(":", "':' and a match kind")
            kind = self.name("a match kind")
            annotations = self.annotations()
            self.expect(";")
            elements.append(
                ast.KeyElement(
                    pos=pos, expr=expr, match_kind=ast.PathExpression(pos=kind.pos, name=kind.text),
                    annotations=annotations,
                )
            )  # fmt: skip
        return elements

    def action_list(self) -> list[ast.ActionRef]:
        """`{ @annotations action_ref; ... }`."""
        self.expect("{")
        actions = []
        while not self.accept("}"):
            actions.append(self.action_ref(self.annotations()))
            self.expect(";")
        return actions

    def action_ref(self, annotations: list[ast.Annotation]) -> ast.ActionRef:
        """`name` or `name(args)` (args may bind only some parameters)."""
        tok = self.peek()
        is_global = bool(self.accept("."))
        name = self.name("an action name")
        expr: ast.Expression = ast.PathExpression(pos=tok.pos, name=name.text, is_global=is_global)
        args: list[ast.Argument] = []
        if self.at("("):
            args = self.arguments()
            expr = ast.MethodCallExpression(pos=tok.pos, callee=expr, args=args)
        return ast.ActionRef(pos=tok.pos, expr=expr, annotations=annotations, args=args)

    def entries(self, table_const: bool) -> list[ast.Entry]:
        """`{ [@annotations] [const] [priority = N :] keyset : action @annotations; ... }`."""
        self.expect("{")
        entries = []
        while not self.accept("}"):
            pos = self.peek().pos
            # Annotations may lead the entry (`@priority(3) k : a();`) as well as follow it.
            leading = self.annotations()
            is_const = bool(self.accept("const")) or table_const
            leading += self.annotations()
            priority = None
            if self.at("priority") and self.peek(1).kind == "=":
                self.advance()
                self.advance()
                priority = self.primary() if self.at("INT") else self._parenthesised()
                self.expect(":", "':' after the entry priority")
            keyset_expr = self.keyset()
            keyset = (
                keyset_expr.components
                if isinstance(keyset_expr, ast.ListExpression)
                else [keyset_expr]
            )
            self.expect(":", "':' and an action")
            action = self.action_ref([])
            annotations = leading + self.annotations()
            self.expect(";")
            entries.append(
                ast.Entry(
                    pos=pos, keyset=keyset, action=action, priority=priority, is_const=is_const,
                    annotations=annotations,
                )
            )  # fmt: skip
        return entries
